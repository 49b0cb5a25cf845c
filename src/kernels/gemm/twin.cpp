// The gemm CPU twin and float64 reference (order stated in twin.hpp).
#include "kernels/gemm/twin.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/matvec/twin.hpp"
#include "quant/half.hpp"
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

// A Q8_0 or Q4_0 weight's codes [n, k] (Q4_0: the nibble, 0..15) and f16
// scales [n, k / 32], as the int8 kernel reads them.
struct Codes {
  std::vector<int8_t> q;
  std::vector<float> d;
};
Codes codes(const matvec::HostWeight& w) {
  const size_t rb = row_bytes(w.kind.format, w.k), kb = w.k / 32;
  BQ_CHECK(w.ggml.size() == rb * w.n, "gemm twin: weight holds {} bytes, needs {}", w.ggml.size(), rb * w.n);
  const bool q4 = w.kind.format == Format::Q4_0;
  Codes c{std::vector<int8_t>(size_t{w.n} * w.k), std::vector<float>(size_t{w.n} * kb)};
  for (size_t b = 0; b < size_t{w.n} * kb; ++b) {
    const uint8_t* blk = w.ggml.data() + b * (q4 ? 18 : 34);
    c.d[b] = f16_to_f32(uint16_t(blk[0] | blk[1] << 8));
    for (size_t j = 0; j < 32; ++j)
      c.q[b * 32 + j] = q4 ? int8_t(j < 16 ? blk[2 + j] & 15 : blk[2 + j - 16] >> 4) : int8_t(blk[2 + j]);
  }
  return c;
}

// The int8 kernel (features.dot4), in its order: per output and block b in
// order, acc = acc + (dw * dx) * f32(sum of qw * qx - OFF * sum of qx).
std::vector<float> run_int8(const KernelSpec& s, const TwinInputs& in) {
  BQ_CHECK(in.a && in.x.size() >= size_t{in.m} * s.k, "gemm twin {}: weight and x [m, k] required", s.key());
  const bool silu = s.hooks.epilogue == Epilogue::SiluGate;
  const int32_t off = s.weight.format == Format::Q4_0 ? 8 : 0;
  const Codes ca = codes(*in.a);
  Codes cb;
  if (silu) cb = codes(*in.b);
  const uint32_t kb = s.k / 32;
  std::vector<float> y(size_t{in.m} * s.n);
  for (uint32_t t = 0; t < in.m; ++t) {
    const matvec::QuantX qx = matvec::quantize_x(in.x.subspan(size_t{t} * s.k, s.k));
    auto sum = [&](const Codes& c, uint32_t r) {
      float acc = 0;
      for (uint32_t b = 0; b < kb; ++b) {
        int32_t i = 0;
        for (uint32_t e = 0; e < 32; ++e) i += int32_t(c.q[size_t{r} * s.k + b * 32 + e]) * qx.q[b * 32 + e];
        i -= off * (qx.sum[2 * b] + qx.sum[2 * b + 1]);
        acc = acc + (c.d[size_t{r} * kb + b] * qx.scale[b]) * float(i);
      }
      return acc;
    };
    for (uint32_t r = 0; r < s.n; ++r) {
      const float a = sum(ca, r);
      const size_t o = size_t{t} * s.n + r;
      switch (s.hooks.epilogue) {
        case Epilogue::Acc: y[o] = in.y_in[o] + a; break;
        case Epilogue::SiluGate: {
          const float b = sum(cb, r);
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
