// Gather CPU twins (GatherBlockQuantized, embedding lookup) and their float64
// references (see twin.hpp for the block decode).
#include "kernels/gather/twin.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>

#include "kernels/common/reduce_twin.hpp"
#include "quant/blocks.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::twin {
namespace {

// Elements of a shape (1 for rank 0); Error on a negative dim.
int64_t numel(const Shape& s, const char* what) {
  int64_t n = 1;
  for (int64_t d : s) {
    BQ_CHECK(d >= 0, "GatherBlockQuantized: {} shape [{}] has a negative dim", what,
             fmt::join(s, ", "));
    n *= d;
  }
  return n;
}

int64_t normalize_axis(int64_t axis, int64_t r, const char* name) {
  BQ_CHECK(axis >= -r && axis < r,
           "GatherBlockQuantized: {} {} is outside [{}, {}] for data of rank {}", name, axis, -r,
           r - 1, r);
  return axis < 0 ? axis + r : axis;
}

size_t index_count(const IndexSpan& s) {
  return std::visit([](auto sp) { return sp.size(); }, s);
}

int64_t index_at(const IndexSpan& s, size_t i) {
  return std::visit([i](auto sp) { return static_cast<int64_t>(sp[i]); }, s);
}

// "indices[1, 2]" for flat position p of an indices tensor of shape `shape`.
std::string index_coords(const Shape& shape, int64_t p) {
  std::vector<int64_t> c(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    c[i] = shape[i] ? p % shape[i] : 0;
    p = shape[i] ? p / shape[i] : 0;
  }
  return fmt::format("indices[{}]", fmt::join(c, ", "));
}

// Indices normalised to [0, axis_dim); Error for the first out-of-range one.
std::vector<int64_t> resolve_indices(const GbqInputs& in, const GbqPlan& p) {
  std::vector<int64_t> idx(static_cast<size_t>(p.n_indices));
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t v = index_at(in.indices, i);
    BQ_CHECK(v >= -p.axis_dim && v < p.axis_dim,
             "GatherBlockQuantized: index {} at {} (flat position {}) is out of range [{}, {}) "
             "for gather axis {} of size {}",
             v, index_coords(in.indices_shape, int64_t(i)), i, -p.axis_dim, p.axis_dim,
             p.gather_axis, p.axis_dim);
    idx[i] = v < 0 ? v + p.axis_dim : v;
  }
  return idx;
}

// Calls f(o, q - zp, scale) for every output element o, in output order.
template <class F>
void for_each_output(const GbqInputs& in, const GbqSpec& spec, const GbqPlan& p, F&& f) {
  const std::vector<int64_t> idx = resolve_indices(in, p);
  const uint32_t bits = spec.bits;
  const int64_t per_byte = 8 / bits;
  const uint32_t mask = (1u << bits) - 1u;
  const bool has_zp = !in.zero_points.empty();
  const int32_t default_zp = 1 << (bits - 1);
  size_t o = 0;
  for (int64_t m = 0; m < p.outer; ++m) {
    for (int64_t n = 0; n < p.n_indices; ++n) {
      const int64_t base = (m * p.axis_dim + idx[size_t(n)]) * p.inner;
      for (int64_t k = 0; k < p.inner; ++k, ++o) {
        const int64_t e = base + k;
        const int64_t row = e / p.cols;
        const int64_t blk = (e % p.cols) / spec.block_size;
        const uint32_t byte = in.data[size_t(e / per_byte)];
        const int32_t q = int32_t((byte >> (bits * uint32_t(e % per_byte))) & mask);
        int32_t zp = default_zp;
        if (has_zp) {
          const int64_t zb = row * p.zp_row_bytes + blk / per_byte;
          zp = int32_t((in.zero_points[size_t(zb)] >> (bits * uint32_t(blk % per_byte))) & mask);
        }
        f(o, q - zp, in.scales[size_t(row * p.n_blocks + blk)]);
      }
    }
  }
}

}  // namespace

GbqPlan gbq_plan(const GbqInputs& in, const GbqSpec& spec) {
  BQ_CHECK(spec.bits == 2 || spec.bits == 4 || spec.bits == 8,
           "GatherBlockQuantized: bits {} (uint8 data takes 2, 4 or 8)", spec.bits);
  BQ_CHECK(spec.block_size >= 16 && is_pow2(spec.block_size),
           "GatherBlockQuantized: block_size {} is not a power of two >= 16", spec.block_size);
  const auto r = static_cast<int64_t>(in.data_shape.size());
  BQ_CHECK(r >= 1, "GatherBlockQuantized: data must have rank >= 1");
  GbqPlan p;
  p.gather_axis = normalize_axis(spec.gather_axis, r, "gather_axis");
  const int64_t qa = normalize_axis(spec.quantize_axis, r, "quantize_axis");
  BQ_CHECK(qa == r - 1,
           "GatherBlockQuantized: quantize_axis {} must be the last axis ({}) for uint8 data",
           spec.quantize_axis, r - 1);
  BQ_CHECK(p.gather_axis != qa,
           "GatherBlockQuantized: gather_axis {} is the quantized axis (data shape [{}])",
           spec.gather_axis, fmt::join(in.data_shape, ", "));
  const int64_t data_n = numel(in.data_shape, "data");
  BQ_CHECK(size_t(data_n) == in.data.size(),
           "GatherBlockQuantized: data has {} bytes, shape [{}] needs {}", in.data.size(),
           fmt::join(in.data_shape, ", "), data_n);

  // Logical shape: the last dim holds 8/bits values per byte.
  const int64_t per_byte = 8 / spec.bits;
  Shape logical = in.data_shape;
  logical.back() *= per_byte;
  p.cols = logical.back();
  p.n_blocks = (p.cols + spec.block_size - 1) / spec.block_size;

  Shape want_scales = in.data_shape;
  want_scales.back() = p.n_blocks;
  BQ_CHECK(in.scales_shape == want_scales,
           "GatherBlockQuantized: scales shape [{}] should be [{}] (data [{}], {} values per row, "
           "block_size {})",
           fmt::join(in.scales_shape, ", "), fmt::join(want_scales, ", "),
           fmt::join(in.data_shape, ", "), p.cols, spec.block_size);
  BQ_CHECK(size_t(numel(in.scales_shape, "scales")) == in.scales.size(),
           "GatherBlockQuantized: scales has {} values, shape [{}]", in.scales.size(),
           fmt::join(in.scales_shape, ", "));
  p.zp_row_bytes = (p.n_blocks + per_byte - 1) / per_byte;
  if (!in.zero_points.empty()) {
    Shape want_zp = want_scales;
    want_zp.back() = p.zp_row_bytes;
    BQ_CHECK(in.zero_points_shape == want_zp,
             "GatherBlockQuantized: zero_points shape [{}] should be [{}] ({} blocks per row, "
             "{} bits)",
             fmt::join(in.zero_points_shape, ", "), fmt::join(want_zp, ", "), p.n_blocks,
             spec.bits);
    BQ_CHECK(size_t(numel(in.zero_points_shape, "zero_points")) == in.zero_points.size(),
             "GatherBlockQuantized: zero_points has {} bytes, shape [{}]", in.zero_points.size(),
             fmt::join(in.zero_points_shape, ", "));
  }
  p.n_indices = numel(in.indices_shape, "indices");
  BQ_CHECK(size_t(p.n_indices) == index_count(in.indices),
           "GatherBlockQuantized: indices has {} values, shape [{}]", index_count(in.indices),
           fmt::join(in.indices_shape, ", "));

  const auto g = size_t(p.gather_axis);
  p.axis_dim = logical[g];
  p.outer = 1;
  for (size_t i = 0; i < g; ++i) p.outer *= logical[i];
  p.inner = 1;
  for (size_t i = g + 1; i < logical.size(); ++i) p.inner *= logical[i];
  p.out_shape.assign(logical.begin(), logical.begin() + g);
  p.out_shape.insert(p.out_shape.end(), in.indices_shape.begin(), in.indices_shape.end());
  p.out_shape.insert(p.out_shape.end(), logical.begin() + g + 1, logical.end());
  p.out_elems = size_t(p.outer * p.n_indices * p.inner);
  return p;
}

void gather_block_quantized(const GbqInputs& in, const GbqSpec& spec, std::span<float> out) {
  const GbqPlan p = gbq_plan(in, spec);
  BQ_ASSERT(out.size() == p.out_elems, "gather_block_quantized: out {} != {}", out.size(),
            p.out_elems);
  for_each_output(in, spec, p, [&](size_t o, int32_t qz, float scale) {
    const float v = static_cast<float>(qz);
    out[o] = v * scale;
  });
}

void gather_block_quantized_f16(const GbqInputs& in, const GbqSpec& spec, std::span<uint16_t> out) {
  const GbqPlan p = gbq_plan(in, spec);
  BQ_ASSERT(out.size() == p.out_elems, "gather_block_quantized_f16: out {} != {}", out.size(),
            p.out_elems);
  for_each_output(in, spec, p, [&](size_t o, int32_t qz, float scale) {
    const float v = static_cast<float>(qz);
    const float y = v * scale;
    out[o] = f32_to_f16(y);
  });
}

// Written apart from for_each_output: walks output coordinates, maps them to
// data coordinates (row = all but the last, col = the last) and decodes there.
void gather_block_quantized_ref(const GbqInputs& in, const GbqSpec& spec, std::span<double> out) {
  const GbqPlan p = gbq_plan(in, spec);
  BQ_ASSERT(out.size() == p.out_elems, "gather_block_quantized_ref: out {} != {}", out.size(),
            p.out_elems);
  const size_t r = in.data_shape.size(), q = in.indices_shape.size(), g = size_t(p.gather_axis);
  const int64_t per_byte = 8 / spec.bits;
  std::vector<int64_t> oc(p.out_shape.size()), dc(r);
  for (size_t o = 0; o < p.out_elems; ++o) {
    int64_t rest = int64_t(o);
    for (size_t i = oc.size(); i-- > 0;) {
      oc[i] = rest % p.out_shape[i];
      rest /= p.out_shape[i];
    }
    int64_t flat_index = 0;  // position in indices
    for (size_t i = 0; i < q; ++i) flat_index = flat_index * in.indices_shape[i] + oc[g + i];
    int64_t v = index_at(in.indices, size_t(flat_index));
    BQ_CHECK(v >= -p.axis_dim && v < p.axis_dim,
             "GatherBlockQuantized: index {} at {} (flat "
             "position {}) is out of range [{}, {}) for gather axis {} of size {}",
             v, index_coords(in.indices_shape, flat_index), flat_index, -p.axis_dim, p.axis_dim, g,
             p.axis_dim);
    if (v < 0) v += p.axis_dim;
    for (size_t i = 0; i < g; ++i) dc[i] = oc[i];
    dc[g] = v;
    for (size_t i = g + 1; i < r; ++i) dc[i] = oc[i - 1 + q];
    int64_t row = 0;
    for (size_t i = 0; i + 1 < r; ++i) row = row * in.data_shape[i] + dc[i];
    const int64_t col = dc[r - 1], blk = col / spec.block_size;
    const uint8_t byte = in.data[size_t(row * in.data_shape[r - 1] + col / per_byte)];
    const int bit0 = int(col % per_byte) * int(spec.bits);
    const int qv = (byte >> bit0) % (1 << spec.bits);
    int zp = 1 << (spec.bits - 1);
    if (!in.zero_points.empty()) {
      const uint8_t zb = in.zero_points[size_t(row * p.zp_row_bytes + blk / per_byte)];
      zp = (zb >> (int(blk % per_byte) * int(spec.bits))) % (1 << spec.bits);
    }
    out[o] = double(qv - zp) * double(in.scales[size_t(row * p.n_blocks + blk)]);
  }
}

namespace {

double f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// One decoded value v = a + b with its error scale |a| + |b|.
struct Out {
  double* v;
  double* mag;
  void put(size_t i, double a, double b = 0.0) {
    v[i] = a + b;
    if (mag) mag[i] = std::fabs(a) + std::fabs(b);
  }
};

// ggml's 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block.
void scale_min_k4(int j, const uint8_t* s, int& sc, int& mn) {
  if (j < 4) {
    sc = s[j] & 63;
    mn = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Decodes one block of `fmt` at b into out[0..block_elems) in double.
void decode_block_f64(Format fmt, const uint8_t* b, Out o) {
  switch (fmt) {
    case Format::F32: {
      float f;
      std::memcpy(&f, b, 4);
      o.put(0, f);
      return;
    }
    case Format::F16:
      o.put(0, f16_at(b));
      return;
    case Format::BF16: {
      uint16_t h;
      std::memcpy(&h, b, 2);
      o.put(0, bf16_to_f32(h));
      return;
    }
    case Format::Q4_0:  // d, qs[16]: element j low nibble of byte j, j+16 high nibble
      for (int j = 0; j < 16; ++j) {
        o.put(j, ((b[2 + j] & 15) - 8) * f16_at(b));
        o.put(j + 16, ((b[2 + j] >> 4) - 8) * f16_at(b));
      }
      return;
    case Format::Q4_1:  // d, m, qs[16]
      for (int j = 0; j < 16; ++j) {
        o.put(j, (b[4 + j] & 15) * f16_at(b), f16_at(b + 2));
        o.put(j + 16, (b[4 + j] >> 4) * f16_at(b), f16_at(b + 2));
      }
      return;
    case Format::Q5_0:
    case Format::Q5_1: {  // d, [m], qh (u32 LE: bit j = bit 4 of element j), qs[16]
      const bool q51 = fmt == Format::Q5_1;
      const uint8_t* qh = b + (q51 ? 4 : 2);
      const uint8_t* qs = qh + 4;
      const uint32_t h =
          uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
      for (int j = 0; j < 32; ++j) {
        const int lo = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
        const int q = lo | int((h >> j) & 1) << 4;
        if (q51)
          o.put(j, q * f16_at(b), f16_at(b + 2));
        else
          o.put(j, (q - 16) * f16_at(b));
      }
      return;
    }
    case Format::Q8_0:  // d, qs int8[32]
      for (int j = 0; j < 32; ++j) o.put(j, int8_t(b[2 + j]) * f16_at(b));
      return;
    case Format::Q4_K:
    case Format::Q5_K: {
      // d, dmin, scales[12], [qh[32]], qs[128]. Chunk c of 64 elements: sub-blocks
      // 2c (low nibbles of qs[32c..32c+32)) and 2c+1 (high nibbles); Q5_K's bit 4 of
      // element l of sub-block s is bit s of qh[l].
      const bool k5 = fmt == Format::Q5_K;
      const uint8_t* qh = b + 16;
      const uint8_t* qs = b + (k5 ? 48 : 16);
      for (int s = 0; s < 8; ++s) {
        int sc, mn;
        scale_min_k4(s, b + 4, sc, mn);
        for (int l = 0; l < 32; ++l) {
          const uint8_t byte = qs[32 * (s / 2) + l];
          int q = s % 2 ? byte >> 4 : byte & 15;
          if (k5) q += ((qh[l] >> s) & 1) * 16;
          o.put(size_t(32 * s + l), f16_at(b) * sc * q, -f16_at(b + 2) * mn);
        }
      }
      return;
    }
    case Format::Q6_K: {
      // ql[128], qh[64], scales int8[16], d. Element i = 128h + 32k + l (h half,
      // k quarter, l < 32): low 4 bits from ql[64h + l + 32(k%2)] (nibble k/2),
      // high 2 bits from qh[32h + l] bits 2k..2k+1, scale scales[8h + l/16 + 2k].
      const uint8_t* ql = b;
      const uint8_t* qh = b + 128;
      const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
      const double d = f16_at(b + 208);
      for (int i = 0; i < 256; ++i) {
        const int h = i / 128, k = (i % 128) / 32, l = i % 32;
        const uint8_t lb = ql[64 * h + l + 32 * (k % 2)];
        const int lo = k / 2 ? lb >> 4 : lb & 15;
        const int hi = (qh[32 * h + l] >> (2 * k)) & 3;
        o.put(size_t(i), d * sc[8 * h + l / 16 + 2 * k] * ((lo | hi << 4) - 32));
      }
      return;
    }
    case Format::IQ4_NL:  // d, qs[16] as Q4_0's, each nibble a level of kIq4nlValues
      for (int j = 0; j < 16; ++j) {
        o.put(j, kIq4nlValues[b[2 + j] & 15] * f16_at(b));
        o.put(j + 16, kIq4nlValues[b[2 + j] >> 4] * f16_at(b));
      }
      return;
    case Format::IQ4_XS: {  // d, scales_h, scales_l[4], qs[128]: sub-block s as IQ4_NL's, scale d * (ls - 32)
      const int sh = b[2] | b[3] << 8;
      for (int s = 0; s < 8; ++s) {
        const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 15) | ((sh >> (2 * s)) & 3) << 4;
        const double dl = f16_at(b) * (ls - 32);
        for (int j = 0; j < 16; ++j) {
          o.put(size_t(32 * s + j), dl * kIq4nlValues[b[8 + 16 * s + j] & 15]);
          o.put(size_t(32 * s + j + 16), dl * kIq4nlValues[b[8 + 16 * s + j] >> 4]);
        }
      }
      return;
    }
    case Format::Q2_K:
    case Format::Q3_K: {
      // Q2_K: scales[16], qs[64], d, dmin; Q3_K: hmask[32], qs[64], scales[12], d.
      // Element i = 128h + 32k + l: 2 bits from qs[32h + l] bits 2k..2k+1, in
      // sub-block s = i / 16; Q3_K's third bit is bit i / 32 of hmask[l]
      // (clear: minus 4) and its 6-bit scale as blocks.hpp packs it.
      const bool k2 = fmt == Format::Q2_K;
      const uint8_t* qs = b + (k2 ? 16 : 32);
      for (int i = 0; i < 256; ++i) {
        const int h = i / 128, k = (i % 128) / 32, l = i % 32, s = i / 16;
        const int q = (qs[32 * h + l] >> (2 * k)) & 3;
        if (k2) {
          o.put(size_t(i), f16_at(b + 80) * (b[s] & 15) * q, -f16_at(b + 82) * (b[s] >> 4));
        } else {
          const uint8_t* sc = b + 96;
          const int lo = s < 8 ? sc[s] & 15 : sc[s - 8] >> 4;
          const int scale = (lo | ((sc[8 + s % 4] >> (2 * (s / 4))) & 3) << 4) - 32;
          o.put(size_t(i), f16_at(b + 108) * scale * (q - ((b[l] >> (i / 32)) & 1 ? 0 : 4)));
        }
      }
      return;
    }
  }
  BQ_ASSERT(false, "decode_block_f64: format {}", int(fmt));
}

void check_ids(std::span<const int32_t> ids, const EmbedSpec& spec) {
  for (size_t t = 0; t < ids.size(); ++t) {
    BQ_CHECK(ids[t] >= 0 && uint64_t(ids[t]) < spec.n_vocab,
             "embedding: token id {} at position {} is out of range [0, {})", ids[t], t,
             spec.n_vocab);
  }
}

size_t checked_row_bytes(std::span<const uint8_t> table, const EmbedSpec& spec) {
  const size_t rb = row_bytes(spec.format, spec.n_embd);
  BQ_CHECK(table.size() >= rb * spec.n_vocab,
           "embedding: {} table of [{}, {}] needs {} bytes, has {}", traits(spec.format).name,
           spec.n_vocab, spec.n_embd, rb * spec.n_vocab, table.size());
  return rb;
}

}  // namespace

void embed_rows(std::span<const uint8_t> table, std::span<const int32_t> ids, std::span<float> out,
                const EmbedSpec& spec) {
  const size_t rb = checked_row_bytes(table, spec);
  BQ_ASSERT(out.size() == ids.size() * spec.n_embd, "embed_rows: out {} for {} ids x {}",
            out.size(), ids.size(), spec.n_embd);
  check_ids(ids, spec);
  const FormatTraits& tr = traits(spec.format);
  for (size_t t = 0; t < ids.size(); ++t) {
    tr.dequantize(table.data() + size_t(ids[t]) * rb, out.data() + t * spec.n_embd, spec.n_embd);
  }
}

void embed_rows_ref(std::span<const uint8_t> table, std::span<const int32_t> ids,
                    std::span<double> out, const EmbedSpec& spec, std::span<double> mag) {
  const size_t rb = checked_row_bytes(table, spec);
  BQ_ASSERT(out.size() == ids.size() * spec.n_embd && (mag.empty() || mag.size() == out.size()),
            "embed_rows_ref: out {} mag {} for {} ids x {}", out.size(), mag.size(), ids.size(),
            spec.n_embd);
  check_ids(ids, spec);
  const FormatTraits& tr = traits(spec.format);
  for (size_t t = 0; t < ids.size(); ++t) {
    const uint8_t* row = table.data() + size_t(ids[t]) * rb;
    for (uint64_t blk = 0; blk < spec.n_embd / tr.block_elems; ++blk) {
      const size_t o = t * spec.n_embd + blk * tr.block_elems;
      decode_block_f64(spec.format, row + blk * tr.block_bytes,
                       Out{out.data() + o, mag.empty() ? nullptr : mag.data() + o});
    }
  }
}

}  // namespace blockq::twin
