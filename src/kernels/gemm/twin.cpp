// The gemm CPU twin and float64 reference (order stated in twin.hpp).
#include "kernels/gemm/twin.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/matvec/twin.hpp"
#include "kernels/matvec/raw.hpp"
#include "util/error.hpp"

namespace blockq::gemm {

namespace {

// W [n, k] decoded in f32 by the format's reference dequantizer.
std::vector<float> decode(const matvec::HostWeight& w) {
  const size_t rb = row_bytes(w.kind.format, w.k);
  BQ_CHECK(w.ggml.size() == rb * w.n, "gemm twin: weight holds {} bytes, needs {}", w.ggml.size(), rb * w.n);
  std::vector<float> out(size_t{w.n} * w.k);
  for (uint32_t r = 0; r < w.n; ++r)
    traits(w.kind.format).dequantize(w.ggml.data() + rb * r, out.data() + size_t{r} * w.k, w.k);
  return out;
}

// The int8 kernel (features.dot4), in its order: per output and block b of
// 32 in order, with the raw codes c (Q4_0: q - 8), scale and min of
// matvec::raw_rows (the int8 path's decode), i = sum of c * qx (exact):
// acc = acc + (scale * dx) * f32(i), then with a min acc = acc + min * (dx
// * f32(sum of qx)); Q6_K's, Q3_K's and Q2_K's halves of 16 (a scale each,
// and for Q2_K a min times that half's qx sum) one after the other. Split-k: slice z sums the blocks of its steps (tile / 32
// blocks a step, ceil(steps / splits) steps a slice) from 0, and the
// slices' sums are added in order (split_sum).
std::vector<float> run_int8(const KernelSpec& s, const TwinInputs& in) {
  BQ_CHECK(in.a && in.x.size() >= size_t{in.m} * s.k, "gemm twin {}: weight and x [m, k] required", s.key());
  const bool silu = s.hooks.epilogue == Epilogue::SiluGate;
  const matvec::RawRows ra = matvec::raw_rows(*in.a, 0, s.n);
  matvec::RawRows rb;
  if (silu) rb = matvec::raw_rows(*in.b, 0, s.n);
  const uint32_t kb = s.k / 32, ks = std::max<uint32_t>(1, s.tile / 32);
  const uint32_t splits = std::max<uint32_t>(1, s.splits), sps = (kb / ks + splits - 1) / splits;
  // Scales per block of 32, or (Q6_K, Q3_K, Q2_K) per half of 16: each half summed and scaled on its own.
  const uint32_t halves = ra.scale.size() == size_t{s.n} * kb * 2 ? 2 : 1;
  BQ_CHECK(ra.code.size() == size_t{s.n} * s.k && ra.scale.size() == size_t{s.n} * kb * halves,
           "gemm twin {}: the weight's raw rows are not in blocks of 32 or 16", s.key());
  std::vector<float> y(size_t{in.m} * s.n);
  for (uint32_t t = 0; t < in.m; ++t) {
    const matvec::QuantX qx = matvec::quantize_x(in.x.subspan(size_t{t} * s.k, s.k));
    auto sum = [&](const matvec::RawRows& w, uint32_t r) {
      float total = 0;
      for (uint32_t z = 0; z < splits; ++z) {
        float acc = 0;
        for (uint32_t b = std::min(kb, z * sps * ks); b < std::min(kb, (z + 1) * sps * ks); ++b) {
          for (uint32_t h = 0; h < halves; ++h) {
            int32_t i = 0;
            for (uint32_t e = h * 32 / halves; e < (h + 1) * 32 / halves; ++e)
              i += int32_t(w.code[size_t{r} * s.k + b * 32 + e]) * qx.q[b * 32 + e];
            const size_t g = (size_t{r} * kb + b) * halves + h;
            acc = acc + (w.scale[g] * qx.scale[b]) * float(i);
            const int32_t xsum = halves == 2 ? qx.sum[2 * b + h] : qx.sum[2 * b] + qx.sum[2 * b + 1];
            if (!w.min.empty()) acc = acc + w.min[g] * (qx.scale[b] * float(xsum));
          }
        }
        total = z == 0 ? acc : total + acc;
      }
      return total;
    };
    for (uint32_t r = 0; r < s.n; ++r) {
      const float a = sum(ra, r);
      const size_t o = size_t{t} * s.n + r;
      switch (s.hooks.epilogue) {
        case Epilogue::Acc: y[o] = in.y_in[o] + a; break;
        case Epilogue::SiluGate: {
          const float b = sum(rb, r);
          y[o] = (a / (1.0f + std::exp(-a))) * b;
          break;
        }
        default: y[o] = a;
      }
    }
  }
  return y;
}

template <typename T>
std::vector<T> run(const KernelSpec& s, const TwinInputs& in) {
  BQ_CHECK(in.a && in.x.size() >= size_t{in.m} * s.k, "gemm twin {}: weight and x [m, k] required", s.key());
  const bool silu = s.hooks.epilogue == Epilogue::SiluGate;
  const auto wa = decode(*in.a);
  std::vector<float> wb;
  if (silu) wb = decode(*in.b);
  std::vector<T> y(size_t{in.m} * s.n);
  for (uint32_t t = 0; t < in.m; ++t)
    for (uint32_t r = 0; r < s.n; ++r) {
      const float* x = in.x.data() + size_t{t} * s.k;
      // Split-k: slice z sums steps [z sps, (z + 1) sps) of TK elements in
      // order; the slices' sums are then added in order (split_sum).
      const uint32_t steps = s.k / s.tile, sps = (steps + s.splits - 1) / s.splits;
      T a = 0, b = 0;
      for (uint32_t z = 0; z < s.splits; ++z) {
        T pa = 0, pb = 0;
        for (uint32_t st = z * sps; st < std::min(steps, (z + 1) * sps); ++st)  // k tiles in order
          for (uint32_t e = st * s.tile; e < (st + 1) * s.tile; ++e) {
            const T p = T(wa[size_t{r} * s.k + e]) * T(x[e]);
            pa = pa + p;
            if (silu) {
              const T q = T(wb[size_t{r} * s.k + e]) * T(x[e]);
              pb = pb + q;
            }
          }
        a = z == 0 ? pa : a + pa;
        b = z == 0 ? pb : b + pb;
      }
      const size_t o = size_t{t} * s.n + r;
      switch (s.hooks.epilogue) {
        case Epilogue::Acc: y[o] = T(in.y_in[o]) + a; break;
        case Epilogue::SiluGate: y[o] = (a / (T(1) + std::exp(-a))) * b; break;
        default: y[o] = a;
      }
    }
  return y;
}

}  // namespace

std::vector<float> twin(const KernelSpec& spec, const TwinInputs& in) {
  return spec.features.dot4 ? run_int8(spec, in) : run<float>(spec, in);
}
std::vector<double> reference(const KernelSpec& spec, const TwinInputs& in) { return run<double>(spec, in); }

}  // namespace blockq::gemm
