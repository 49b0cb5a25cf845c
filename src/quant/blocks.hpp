// The packed block structs of ggml's quantized formats, byte for byte as they
// sit in a GGUF tensor. f16 fields are raw IEEE half bits (see half.hpp).
// Elements of a block are numbered 0..block_elems-1 in row order.
#pragma once
#include <cstddef>
#include <cstdint>

namespace blockq {

inline constexpr int kQK = 32;    // elements per block of Q4_0 .. Q8_0
inline constexpr int kQK_K = 256; // elements per super-block of the K formats
inline constexpr int kKScaleSize = 12;

// x[j] = (nibble j - 8) * d. Byte j holds element j (low nibble) and j+16 (high).
struct block_q4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};

// x[j] = nibble j * d + m, same nibble order as Q4_0.
struct block_q4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};

// x[j] = (5-bit q - 16) * d. Low 4 bits as in Q4_0; bit 4 of element j is
// bit j of the little-endian u32 in qh.
struct block_q5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[j] = 5-bit q * d + m, bits laid out as in Q5_0.
struct block_q5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};

// x[j] = qs[j] * d.
struct block_q8_0 {
  uint16_t d;
  int8_t qs[kQK];
};

// 8 sub-blocks of 32 (s = element / 32): x = d*sc[s]*q - dmin*m[s], q 4 bits.
// scales packs eight 6-bit scales and mins: s < 4: sc = scales[s] & 63,
// m = scales[s+4] & 63; s >= 4: sc = (scales[s+4] & 15) | (scales[s-4] >> 6) << 4,
// m = (scales[s+4] >> 4) | (scales[s] >> 6) << 4.
// qs: for each 64-element group g, 32 bytes; byte l holds element 64g+l (low
// nibble) and 64g+32+l (high nibble).
struct block_q4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qs[kQK_K / 2];
};

// As Q4_K with a fifth bit: bit (2g) of qh[l] is the high bit of element
// 64g+l, bit (2g+1) that of element 64g+32+l.
struct block_q5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleSize];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};

// 16 sub-blocks of 16: x = d * scales[s] * (q - 32), q 6 bits. For each half
// h of 128 elements: ql[64h + l] holds elements 128h+l (low nibble) and
// 128h+64+l (high); ql[64h+32+l] holds 128h+32+l and 128h+96+l; qh[32h+l]
// holds the top 2 bits of 128h+l, +32, +64, +96 in bits 0-1, 2-3, 4-5, 6-7.
struct block_q6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};

// 16 sub-blocks of 16: x = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4),
// q 2 bits. For each half h of 128 elements: element 128h + 32j + l (j =
// 0..3, l = 0..31) is bits 2j..2j+1 of qs[32h + l], in sub-block 8h + 2j + l / 16.
struct block_q2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};

// 16 sub-blocks of 16: x = d * (sc[s] - 32) * (q - 4), q 3 bits: its low 2
// bits as Q2_K's qs, its high bit bit (e / 32) of hmask[e % 32] (element e
// of the block). scales packs sixteen 6-bit sc: the low 4 bits are the low
// (s < 8) or high (s >= 8) nibble of scales[s % 8], the top 2 bits bits
// 2 (s / 4)..2 (s / 4) + 1 of scales[8 + s % 4].
struct block_q3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[kKScaleSize];
  uint16_t d;
};

// The 16 levels of IQ4_NL and IQ4_XS codes (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// x[j] = d * kIq4nlValues[code j], codes as Q4_0's nibbles (byte j holds
// element j low, j + 16 high).
struct block_iq4_nl {
  uint16_t d;
  uint8_t qs[kQK / 2];
};

// 8 sub-blocks of 32: x = d * (ls[s] - 32) * kIq4nlValues[code], codes of
// sub-block s as IQ4_NL's in qs[16 s .. 16 s + 15]; ls 6 bits: the low
// (s even) or high nibble of scales_l[s / 2], bits 2s..2s+1 of scales_h on top.
struct block_iq4_xs {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};

static_assert(sizeof(block_q4_0) == 18 && offsetof(block_q4_0, qs) == 2);
static_assert(sizeof(block_q4_1) == 20 && offsetof(block_q4_1, qs) == 4);
static_assert(sizeof(block_q5_0) == 22 && offsetof(block_q5_0, qs) == 6);
static_assert(sizeof(block_q5_1) == 24 && offsetof(block_q5_1, qs) == 8);
static_assert(sizeof(block_q8_0) == 34 && offsetof(block_q8_0, qs) == 2);
static_assert(sizeof(block_q4_K) == 144 && offsetof(block_q4_K, qs) == 16);
static_assert(sizeof(block_q5_K) == 176 && offsetof(block_q5_K, qh) == 16 &&
              offsetof(block_q5_K, qs) == 48);
static_assert(sizeof(block_q6_K) == 210 && offsetof(block_q6_K, qh) == 128 &&
              offsetof(block_q6_K, scales) == 192 && offsetof(block_q6_K, d) == 208);
static_assert(sizeof(block_iq4_nl) == 18 && offsetof(block_iq4_nl, qs) == 2);
static_assert(sizeof(block_iq4_xs) == 136 && offsetof(block_iq4_xs, scales_l) == 4 && offsetof(block_iq4_xs, qs) == 8);
static_assert(sizeof(block_q2_K) == 84 && offsetof(block_q2_K, qs) == 16 && offsetof(block_q2_K, d) == 80);
static_assert(sizeof(block_q3_K) == 110 && offsetof(block_q3_K, qs) == 32 &&
              offsetof(block_q3_K, scales) == 96 && offsetof(block_q3_K, d) == 108);

}  // namespace blockq
