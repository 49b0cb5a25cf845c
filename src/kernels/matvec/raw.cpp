// Raw codes, group scales and mins of a matvec weight (see raw.hpp), decoded
// from ggml blocks and ONNX matrices on the host.
#include "kernels/matvec/raw.hpp"

#include <cstring>

#include "kernels/matvec/twin.hpp"
#include "quant/blocks.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::matvec {

namespace {

float h16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return f16_to_f32(v);
}

// ggml's get_scale_min_k4: 6-bit scale and min of sub-block j.
void scale_min(int j, const uint8_t* q, uint32_t& sc, uint32_t& m) {
  if (j < 4) {
    sc = q[j] & 63u;
    m = q[j + 4] & 63u;
  } else {
    sc = (q[j + 4] & 0xfu) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// One row of ggml blocks: codes into c (k of them), scales and mins per group.
void ggml_row(Format f, const uint8_t* row, uint32_t k, float* c, float* sc, float* mn) {
  switch (f) {
    case Format::Q8_0:
      for (uint32_t b = 0; b < k / 32; ++b) {
        const uint8_t* blk = row + b * 34;
        sc[b] = h16(blk);
        for (int i = 0; i < 32; ++i) c[b * 32 + i] = static_cast<float>(static_cast<int8_t>(blk[2 + i]));
      }
      return;
    case Format::Q4_0: case Format::Q4_1: {
      const bool m = f == Format::Q4_1;
      const uint32_t bb = m ? 20 : 18;
      for (uint32_t b = 0; b < k / 32; ++b) {
        const uint8_t* blk = row + b * bb;
        sc[b] = h16(blk);
        if (m) mn[b] = h16(blk + 2);
        const uint8_t* qs = blk + (m ? 4 : 2);
        const float off = m ? 0.f : 8.f;
        for (int i = 0; i < 16; ++i) {
          c[b * 32 + i] = static_cast<float>(qs[i] & 15) - off;
          c[b * 32 + 16 + i] = static_cast<float>(qs[i] >> 4) - off;
        }
      }
      return;
    }
    case Format::Q5_0: case Format::Q5_1: {
      const bool m = f == Format::Q5_1;
      const uint32_t bb = m ? 24 : 22;
      for (uint32_t b = 0; b < k / 32; ++b) {
        const uint8_t* blk = row + b * bb;
        sc[b] = h16(blk);
        if (m) mn[b] = h16(blk + 2);
        uint32_t qh;
        std::memcpy(&qh, blk + (m ? 4 : 2), 4);
        const uint8_t* qs = blk + (m ? 8 : 6);
        const float off = m ? 0.f : 16.f;
        for (int i = 0; i < 16; ++i) {
          c[b * 32 + i] = static_cast<float>((qs[i] & 15) | (((qh >> i) & 1) << 4)) - off;
          c[b * 32 + 16 + i] = static_cast<float>((qs[i] >> 4) | (((qh >> (i + 16)) & 1) << 4)) - off;
        }
      }
      return;
    }
    case Format::Q4_K: case Format::Q5_K: {
      const bool five = f == Format::Q5_K;
      const uint32_t bb = five ? 176 : 144;
      for (uint32_t b = 0; b < k / 256; ++b) {
        const uint8_t* blk = row + b * bb;
        const float d = h16(blk), dmin = h16(blk + 2);
        const uint8_t* scales = blk + 4;
        const uint8_t* qh = blk + 16;
        const uint8_t* qs = blk + (five ? 48 : 16);
        for (int j = 0; j < 8; ++j) {
          uint32_t s, m;
          scale_min(j, scales, s, m);
          sc[b * 8 + j] = d * static_cast<float>(s);
          mn[b * 8 + j] = -(dmin * static_cast<float>(m));
          for (int l = 0; l < 32; ++l) {
            const uint8_t byte = qs[32 * (j / 2) + l];
            uint32_t q = (j % 2 == 0) ? (byte & 15u) : (byte >> 4u);
            if (five) q |= ((qh[l] >> j) & 1u) << 4;
            c[b * 256 + j * 32 + l] = static_cast<float>(q);
          }
        }
      }
      return;
    }
    case Format::Q6_K:
      for (uint32_t b = 0; b < k / 256; ++b) {
        const uint8_t* blk = row + b * 210;
        const uint8_t* ql = blk;
        const uint8_t* qh = blk + 128;
        const int8_t* s8 = reinterpret_cast<const int8_t*>(blk + 192);
        const float d = h16(blk + 208);
        for (int g = 0; g < 16; ++g) sc[b * 16 + g] = d * static_cast<float>(s8[g]);
        for (int h = 0; h < 2; ++h)
          for (int q = 0; q < 4; ++q)
            for (int l = 0; l < 32; ++l) {
              const uint8_t lb = ql[64 * h + l + 32 * (q & 1)];
              const uint32_t lo = (q >> 1) ? (lb >> 4u) : (lb & 15u);
              const uint32_t hi = (qh[32 * h + l] >> (2 * q)) & 3u;
              c[b * 256 + 128 * h + 32 * q + l] = static_cast<float>(lo | (hi << 4)) - 32.f;
            }
      }
      return;
    case Format::Q2_K: case Format::Q3_K: {
      const bool two = f == Format::Q2_K;
      for (uint32_t b = 0; b < k / 256; ++b) {
        const uint8_t* blk = row + b * (two ? 84 : 110);
        const uint8_t* qs = blk + (two ? 16 : 32);
        for (int g = 0; g < 16; ++g) {
          if (two) {
            sc[b * 16 + g] = h16(blk + 80) * static_cast<float>(blk[g] & 15u);
            mn[b * 16 + g] = -(h16(blk + 82) * static_cast<float>(blk[g] >> 4u));
          } else {
            const uint8_t* s = blk + 96;
            const uint32_t lo = g < 8 ? (s[g] & 15u) : (s[g - 8] >> 4u);
            const uint32_t hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3u;
            sc[b * 16 + g] = h16(blk + 108) * (static_cast<float>(lo | (hi << 4)) - 32.f);
          }
        }
        for (int e = 0; e < 256; ++e) {
          const int h = e / 128, q = e % 128 / 32, l = e % 32;
          uint32_t code = (qs[32 * h + l] >> (2 * q)) & 3u;
          if (!two) code |= ((blk[l] >> (e / 32)) & 1u) << 2;  // hmask[l], bit e / 32
          c[b * 256 + e] = static_cast<float>(code) - (two ? 0.f : 4.f);
        }
      }
      return;
    }
    case Format::IQ4_NL: case Format::IQ4_XS: {
      const bool xs = f == Format::IQ4_XS;
      for (uint32_t b = 0; b < k / 32; ++b) {
        // IQ4_NL: block b (d, qs[16]); IQ4_XS: sub-block b % 8 of super-block b / 8.
        const uint8_t* blk = row + (xs ? (b / 8) * 136 : b * 18);
        const uint8_t* qs = xs ? blk + 8 + 16 * (b % 8) : blk + 2;
        if (xs) {
          const uint32_t s = b % 8, sh = blk[2] | (uint32_t{blk[3]} << 8);
          const uint32_t ls = ((blk[4 + s / 2] >> (4 * (s % 2))) & 15u) | (((sh >> (2 * s)) & 3u) << 4);
          sc[b] = h16(blk) * (static_cast<float>(ls) - 32.f);
        } else {
          sc[b] = h16(blk);
        }
        for (int i = 0; i < 16; ++i) {
          c[b * 32 + i] = static_cast<float>(kIq4nlValues[qs[i] & 15]);
          c[b * 32 + 16 + i] = static_cast<float>(kIq4nlValues[qs[i] >> 4]);
        }
      }
      return;
    }
    case Format::F32: case Format::F16: case Format::BF16: break;
  }
  BQ_ASSERT(false, "ggml_row: format without codes");
}

}  // namespace

RawRows raw_rows(const HostWeight& w, uint32_t row0, uint32_t rows) {
  const UnitInfo ui = unit_info(w.kind, w.k);
  RawRows out;
  if (!ui.group) {
    out.code = dequantize_rows(w, row0, rows);
    return out;
  }
  const uint32_t gpr = ui.kp / ui.group;  // groups per row
  out.code.assign(size_t{rows} * ui.kp, 0.f);
  out.scale.assign(size_t{rows} * gpr, 0.f);
  if (ui.has_min) out.min.assign(size_t{rows} * gpr, 0.f);
  if (w.kind.onnx) {
    const OnnxBlockMatrix& m = *w.onnx;
    for (uint32_t r = 0; r < rows; ++r) {
      const uint64_t gr = row0 + r;
      for (uint32_t e = 0; e < ui.kp; ++e) {
        const uint64_t b = e / m.block_size;
        if (b >= m.blocks_per_row()) break;  // past the last block: code 0
        const float zp = static_cast<float>(m.zero_point(gr, b));
        out.code[size_t{r} * ui.kp + e] = static_cast<float>(m.code(gr, e)) - zp;
      }
      for (uint32_t g = 0; g < gpr; ++g) {
        const uint64_t b = uint64_t{g} * ui.group / m.block_size;
        out.scale[size_t{r} * gpr + g] = b < m.blocks_per_row() ? m.scales[gr * m.blocks_per_row() + b] : 0.f;
      }
    }
    return out;
  }
  const size_t rb = blockq::row_bytes(w.kind.format, w.k);
  for (uint32_t r = 0; r < rows; ++r)
    ggml_row(w.kind.format, w.ggml.data() + size_t{row0 + r} * rb, w.k, out.code.data() + size_t{r} * ui.kp,
             out.scale.data() + size_t{r} * gpr, ui.has_min ? out.min.data() + size_t{r} * gpr : nullptr);
  return out;
}

}  // namespace blockq::matvec
