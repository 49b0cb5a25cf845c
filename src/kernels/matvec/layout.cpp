// Repacking of ggml blocks and ONNX matrices into the matvec layout (see
// layout.hpp and the fmt/*.wgsl snippets, which read exactly these words).
#include "kernels/matvec/layout.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace blockq::matvec {

namespace {

uint32_t rd32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint16_t rd16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
// Appends `bytes` little-endian into words (bytes a multiple of 4).
void put_bytes(std::vector<uint32_t>& out, const uint8_t* p, size_t bytes) {
  for (size_t i = 0; i < bytes; i += 4) out.push_back(rd32(p + i));
}
// f16 values two per word: value i in half i % 2 of word i / 2.
void put_f16_pairs(std::vector<uint32_t>& out, const std::vector<uint16_t>& h) {
  for (size_t i = 0; i < h.size(); i += 2)
    out.push_back(uint32_t{h[i]} | (i + 1 < h.size() ? uint32_t{h[i + 1]} << 16 : 0u));
}

}  // namespace

UnitInfo unit_info(const WeightKind& kind, uint32_t k) {
  uint32_t unit = 32;
  bool side = false;
  if (kind.onnx) {
    unit = kind.bits == 4 ? 32 : 16;
    side = true;
    const uint64_t nb = (uint64_t{k} + kind.block_size - 1) / kind.block_size;
    const uint64_t padded = nb * kind.block_size;
    return {unit, unit / 8, static_cast<uint32_t>((padded + unit - 1) / unit * unit), side,
            std::min(unit, kind.block_size), false};
  }
  uint32_t group = 32;
  bool has_min = false;
  switch (kind.format) {
    case Format::Q8_0: case Format::Q4_0: case Format::Q4_1: case Format::Q5_0: case Format::Q5_1:
    case Format::IQ4_NL: case Format::IQ4_XS:
      side = true;
      break;
    case Format::Q4_K: case Format::Q5_K: unit = 64; break;
    case Format::Q6_K: unit = 128; group = 16; side = true; break;
    case Format::Q2_K: unit = 64; group = 16; side = true; break;  // a min: at most 4 groups a unit
    case Format::Q3_K: unit = 128; group = 16; break;
    // Float formats: rows of 4096 or more take 8-element units (16 bytes of
    // F16/BF16), so that the TPR lanes of a row, which take consecutive
    // units, load one contiguous run (the plan gives them 4 units a step).
    // Shorter rows keep 32: on the H200, f16 2560 x 960 took 5.9 us with
    // 32-element units and 6.4 with 8, 49152 x 960 31.7 and 36.6
    // (docs/perf/2026-12-01-session9-h200.md). Either way a row is its k
    // values in order, padded to whole units.
    case Format::F32: case Format::F16: case Format::BF16: unit = k >= 4096 ? 8 : 32; group = 0; break;
  }
  has_min = kind.format == Format::Q4_1 || kind.format == Format::Q5_1 || kind.format == Format::Q4_K ||
            kind.format == Format::Q5_K || kind.format == Format::Q2_K;
  return {unit, unit / 8, (k + unit - 1) / unit * unit, side, group, has_min};
}

void validate(const HostWeight& w) {
  BQ_CHECK(w.n > 0 && w.k > 0, "matvec weight has an empty shape {}x{}", w.n, w.k);
  if (w.kind.onnx) {
    BQ_CHECK(w.onnx, "matvec: ONNX weight without its matrix");
    check_onnx_block_params(w.kind.bits, w.kind.block_size);
    w.onnx->validate();
    BQ_CHECK(w.onnx->rows == w.n && w.onnx->cols == w.k && w.onnx->bits == w.kind.bits &&
                 w.onnx->block_size == w.kind.block_size &&
                 w.onnx->zero_points.has_value() == w.kind.zero_points,
             "matvec: ONNX matrix {}x{} (bits {}, block {}) does not match the weight description",
             w.onnx->rows, w.onnx->cols, w.onnx->bits, w.onnx->block_size);
    return;
  }
  const auto& t = traits(w.kind.format);
  BQ_CHECK(w.k % t.block_elems == 0, "matvec: k = {} is not a multiple of the {} block size {}", w.k,
           t.name, t.block_elems);
  const uint64_t need = uint64_t{w.n} * blockq::row_bytes(w.kind.format, w.k);
  BQ_CHECK(w.ggml.size() == need, "matvec: {} weight {}x{} needs {} bytes, got {}", t.name, w.n, w.k,
           need, w.ggml.size());
}

uint32_t side_offset(const WeightKind& kind, uint32_t k, uint32_t rows) {
  if (kind.onnx) {
    const uint64_t nb = (uint64_t{k} + kind.block_size - 1) / kind.block_size;
    return static_cast<uint32_t>(nb * rows);
  }
  if (kind.format == Format::Q5_0 || kind.format == Format::Q5_1) return rows * (k / 32);
  return 0;
}

RowBytes row_bytes(const WeightKind& kind, uint32_t k) {
  const UnitInfo ui = unit_info(kind, k);
  if (kind.onnx) {
    const double nb = std::ceil(double(k) / kind.block_size);
    const double zp = kind.zero_points ? std::ceil(nb * kind.bits / 8.0) : 0.0;
    return {double(ui.kp) * kind.bits / 8.0, nb * 4.0 + zp};
  }
  const double blocks = double(k) / traits(kind.format).block_elems;
  switch (kind.format) {
    case Format::Q8_0: return {blocks * 32, blocks * 2};
    case Format::Q4_0: return {blocks * 16, blocks * 2};
    case Format::Q4_1: return {blocks * 16, blocks * 4};
    case Format::Q5_0: return {blocks * 16, blocks * 6};
    case Format::Q5_1: return {blocks * 16, blocks * 8};
    case Format::Q4_K: return {blocks * 144, 0};
    case Format::Q5_K: return {blocks * 176, 0};
    case Format::Q6_K: return {blocks * 208, blocks * 2};
    case Format::Q2_K: return {blocks * 80, blocks * 4};
    case Format::Q3_K: return {blocks * 112, 0};
    case Format::IQ4_NL: return {blocks * 16, blocks * 2};
    case Format::IQ4_XS: return {blocks * 128, blocks * 8};
    case Format::F32: return {double(ui.kp) * 4, 0};
    case Format::F16: case Format::BF16: return {double(ui.kp) * 2, 0};
  }
  return {0, 0};
}

Packed pack_rows(const HostWeight& w, uint32_t row0, uint32_t rows) {
  BQ_ASSERT(uint64_t{row0} + rows <= w.n, "rows {}+{} of {}", row0, rows, w.n);
  Packed p;
  const UnitInfo ui = unit_info(w.kind, w.k);
  if (w.kind.onnx) {
    const OnnxBlockMatrix& m = *w.onnx;
    const uint64_t nb = m.blocks_per_row();
    const uint64_t row_data = m.row_data_bytes();
    const uint64_t padded = uint64_t{ui.kp} * m.bits / 8;  // a multiple of 16 bytes
    std::vector<uint8_t> buf(padded);
    for (uint64_t r = row0; r < uint64_t{row0} + rows; ++r) {
      std::fill(buf.begin(), buf.end(), 0);
      std::memcpy(buf.data(), m.data.data() + r * row_data, row_data);
      put_bytes(p.main, buf.data(), padded);
    }
    for (uint64_t r = row0; r < uint64_t{row0} + rows; ++r)
      for (uint64_t b = 0; b < nb; ++b) {
        uint32_t bits;
        std::memcpy(&bits, &m.scales[r * nb + b], 4);
        p.side.push_back(bits);
      }
    p.side_off = static_cast<uint32_t>(p.side.size());
    if (m.zero_points) {
      const uint64_t zr = m.zp_row_bytes();
      std::vector<uint8_t> zp(rows * zr);
      std::memcpy(zp.data(), m.zero_points->data() + uint64_t{row0} * zr, zp.size());
      zp.resize((zp.size() + 3) / 4 * 4, 0);
      put_bytes(p.side, zp.data(), zp.size());
    }
    return p;
  }

  const Format f = w.kind.format;
  const size_t rb = blockq::row_bytes(f, w.k);
  const uint8_t* base = w.ggml.data() + size_t{row0} * rb;
  const size_t nbytes = size_t{rows} * rb;
  const auto& t = traits(f);
  const size_t blocks = nbytes / t.block_bytes;
  std::vector<uint16_t> h16;
  std::vector<uint32_t> qh, side2;
  switch (f) {
    case Format::Q8_0:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 34;
        h16.push_back(rd16(blk));
        put_bytes(p.main, blk + 2, 32);
      }
      put_f16_pairs(p.side, h16);
      break;
    case Format::Q4_0: case Format::IQ4_NL:  // d, qs[16]
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 18;
        h16.push_back(rd16(blk));
        put_bytes(p.main, blk + 2, 16);
      }
      put_f16_pairs(p.side, h16);
      break;
    case Format::Q4_1:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 20;
        p.side.push_back(rd32(blk));  // d (low half), m (high half)
        put_bytes(p.main, blk + 4, 16);
      }
      break;
    case Format::Q5_0:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 22;
        h16.push_back(rd16(blk));
        qh.push_back(rd32(blk + 2));
        put_bytes(p.main, blk + 6, 16);
      }
      p.side = qh;
      p.side_off = static_cast<uint32_t>(p.side.size());
      put_f16_pairs(p.side, h16);
      break;
    case Format::Q5_1:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 24;
        side2.push_back(rd32(blk));
        qh.push_back(rd32(blk + 4));
        put_bytes(p.main, blk + 8, 16);
      }
      p.side = qh;
      p.side_off = static_cast<uint32_t>(p.side.size());
      p.side.insert(p.side.end(), side2.begin(), side2.end());
      break;
    case Format::Q4_K: put_bytes(p.main, base, nbytes); break;  // 144-byte blocks, 4-aligned
    case Format::Q5_K: put_bytes(p.main, base, nbytes); break;  // 176-byte blocks
    case Format::Q6_K:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 210;
        put_bytes(p.main, blk, 208);  // ql[128], qh[64], scales[16]
        h16.push_back(rd16(blk + 208));
      }
      put_f16_pairs(p.side, h16);
      break;
    case Format::Q2_K:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 84;
        put_bytes(p.main, blk, 80);       // scales[16], qs[64]
        p.side.push_back(rd32(blk + 80));  // d (low half), dmin (high half)
      }
      break;
    case Format::IQ4_XS:
      for (size_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = base + b * 136;
        put_bytes(p.main, blk + 8, 128);   // qs[128]
        p.side.push_back(rd32(blk));       // d (low half), scales_h (high half)
        p.side.push_back(rd32(blk + 4));   // scales_l[4]
      }
      break;
    case Format::Q3_K:
      for (size_t b = 0; b < blocks; ++b) {
        uint8_t blk[112] = {};  // hmask[32], qs[64], scales[12], d, 2 bytes of padding
        std::memcpy(blk, base + b * 110, 110);
        put_bytes(p.main, blk, 112);
      }
      break;
    case Format::F32: case Format::F16: case Format::BF16: {
      const size_t esz = f == Format::F32 ? 4 : 2;
      std::vector<uint8_t> buf(size_t{ui.kp} * esz, 0);
      for (uint32_t r = 0; r < rows; ++r) {
        std::memcpy(buf.data(), base + size_t{r} * rb, rb);
        put_bytes(p.main, buf.data(), buf.size());
      }
      break;
    }
  }
  if (p.side.empty() && ui.has_side) p.side.push_back(0);
  return p;
}

}  // namespace blockq::matvec
