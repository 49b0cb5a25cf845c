// Golden tests: blockq's reference quantizers and dequantizers against bytes
// produced by ggml's own code, obtained independently of blockq.
//
// How the data below was made: ggml-org/ggml at commit
// d99724f2b141fed9e1a9f402213506c081433465 (2026-08-21), its src/ggml-quants.c
// compiled unmodified with gcc 12.2 -O2 -std=gnu11 on x86-64 (no FMA), with
// link stubs for the unused ggml_abort/ggml_type_* symbols. A small C program
// filled x[0..511] with golden_input() below (the same code, in C), called
// quantize_row_{q4_0,q4_1,q5_0,q5_1,q8_0,q4_K,q5_K,q6_K,q2_K,q3_K,iq4_nl,iq4_xs}_ref(x, blocks, 512)
// and printed the block bytes as hex; it then called ggml's
// dequantize_row_<format>(blocks, y, 512) and printed the 64-bit FNV-1a hash
// of y's f32 bits (little-endian bytes, element order). The conversion table
// at the end is ggml_compute_fp32_to_fp16 and ggml_compute_fp32_to_bf16
// (ggml-impl.h, same commit) applied to each listed f32 bit pattern. Only the
// program's output is pasted here.
//
// The input uses no libm function, so it is bit-identical on every platform:
// an integer hash of i gives u, exactly representable in [-1, 1); each
// 32-element block b = i / 32 scales or reshapes it (super-block 0: per-block
// ranges from 0.01 to 100; super-block 1: all positive, all negative,
// constant, an outlier, 0.001 scale, 50 scale, exact multiples of 0.25, and
// u * (1 + i % 7)).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "quant/format.hpp"
#include "quant/half.hpp"

namespace blockq {
namespace {

constexpr int kGoldenElems = 512;

float golden_input(uint32_t i) {
  static const float kScale[16] = {1.0f, 0.5f, 2.0f, 0.01f, 8.0f, 100.0f, 0.125f, 3.0f,
                                   1.0f, 1.0f, 1.0f, 1.0f, 0.001f, 50.0f, 1.0f, 1.0f};
  uint32_t h = i * 0x9E3779B1u + 0x7F4A7C15u;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  const float u = (static_cast<float>(h >> 8) - 8388608.0f) / 8388608.0f;
  const uint32_t b = i / 32, j = i % 32;
  switch (b) {
    case 8: return u * 0.5f + 1.5f;
    case 9: return u * 0.5f - 1.5f;
    case 10: return -0.75f;
    case 11: return j == 5 ? 40.0f : j == 20 ? -0.0001f : u;
    case 14: return static_cast<float>(static_cast<int>(h % 17u) - 8) * 0.25f;
    case 15: return u * static_cast<float>(1 + (i % 7));
    default: return u * kScale[b];
  }
}

struct Golden {
  Format format;
  uint64_t dequant_fnv;  // FNV-1a of ggml's dequantized f32 bits
  const char* hex;       // ggml's block bytes
};

// clang-format off
const Golden kGolden[] = {
    {Format::Q4_0, 0x310a42e412826ac9ull,
     "732fb48c9f5eed8ffff5ba41228f660159794dabcdf2afe3e71a4307ad20f112"
     "eeba264ae0b30f5310b5f0565a67bde1fa62104cda75e2941588a34eb547a4ec"
     "0896c640eeef4787a0bbefd41485c256a7a93985a809cabfcab41fcaf1a3d3f9"
     "5e8230d9f0f8033f52fad0dcf5a39d1ee5d499ce85ff2c0edccbb8c86e86c2b5"
     "b7f48badceb21fac0fa85b719298f272e1b32123302201221313221213420332"
     "1342f33323133330301203143311223111423333002e00000000000000000000"
     "00000000000000c58888888888808888888888888888888807085fdef04dfe79"
     "4f1e496c3413a05a0c373dc66c79d8ff6f63690da2e4d4865b396422003430e5"
     "2af6feef40295c9219a340d5ec0d59390779afa997e434999c5a48666408aa7d"},
    {Format::Q4_1, 0xcdd46ee7a39db894ull,
     "d72f73bbb48c9e5ddc8efef5aa41227f56015979b92b2eb7331d502c28e5ccf8"
     "53df0eed2255d9b5093442bff1bcef4a0fa9a5a8431e059defb4258bef145ea0"
     "ea776db14ab85b13f76939bf1110b978d93b17c7112beb7a3da95856c67a57f7"
     "4540465b574ac3d50e5c3c16a17dcf260f07fcc1ad063f2326249baf73e22a2b"
     "76427a10d3f233455737928910369dc1580b8462314de054f167a58e6d781e8d"
     "fb2b233c59934f77fd88c29588d7c108f135b306ec2bf3bf6c3eecc0b0272c5f"
     "da55a7e334e7ccce000000ba000000000000000000000000000000007341f4ba"
     "01011000001f10000101001000000100420807944fcef04ced684e1d485b3313"
     "90590c3752469dd193862700909c97f25d1b2b79a4c69bdd443400c030d529e6"
     "eddf40285b82189340c5db0c593959c50779afa997e434999c5a48666408aa7d"},
    {Format::Q5_0, 0x53e8d9070bec9a58ull,
     "732b7ec9f70969183ebbc90efefa5582540fbc03a3f24da725b11f3599e45fc6"
     "be24760e4a41f234cb654c85e0af416518470d96206ae1bcb3bf69d1f5b32087"
     "a4f9e2908a31d4b619f1358d7b8e48c7003c8b80ccde9d0ea0b7817ddbf6ddb8"
     "291b95ad4e42720a4101747f73681fc698aaafe3e25596e3bd1460a3f1e1066e"
     "b5f390b9f59fb37ffd3c193bbab8138c0adf480ba9765181cbfcc2b1dc07bb72"
     "5ff9f64b9c632f570d41a6f1252fe3f5e1af0000000053366044013317354314"
     "277307652685f32f0000000036277660601416277533537122736667002a0000"
     "00000000000000000000000000000000000000c1dfffffff0000000000000000"
     "00000000000000000704fb6316109f9df09adbd28e1c72c8672630a3096f3dc2"
     "df300c0fc8d2a1eeded5c10b45c8981ca662c8440030b4c53a6a60ca44ececcf"
     "8042a824224680aac80a59358ee7bc410df23e432ec9573137b571dcc80043eb"},
    {Format::Q5_1, 0x17c7911037ce808eull,
     "962b73bb7ec9f70169082ebbc90efde9548244ffbb03a2e27a272eb7da4ee0ca"
     "761bb03951db89f1b6be0dcb449bb37bcf2f42bfbe9ae7b8f169df951e434b40"
     "952e0a4bdf775a06c6105ea075ce2949e6feca728471a727ffc3646f322062f0"
     "983717c77e8224092247d6e46a52b1bd8df5befe8b808c972246c3d56755501c"
     "1daa691c42eb9f5c0e1ef9914a0c6f4604209baf4c8002c3e6c44557ed74f520"
     "b7f46689af7e3403de319dc123f8448da10609b5639cd0a8f2cf5a1edbd01c1a"
     "b927233c3509f257b3268feefa11a43a01be9311f26b870cab27f3bfc7c11ced"
     "d87dda90805f48afb5bb4ec668de8a8d000000ba000000000000000000000000"
     "0000000000000000463df4ba2000000011111000111f10010111011001010110"
     "1e040794fb6316109f9cf099dad28d1b71b7672530a3086f1e429dd120cff3f0"
     "361d4e00202a3ef4ba2756e3599d36bb213000c0b4c53a6a60ba43dcdbbf8041"
     "a7142136809ab7092d3559c58ee7bc410ef24f533ed9684238b582dcc80144ec"},
    {Format::Q8_0, 0xfe28dcf843b82d5full,
     "821fc842705a48736cce248da37cde961712320416d861fe7b7428c1a5fcd981"
     "cff45c1bb661865210dd500eb0786f61a7dc20d9bb8fda9fa872447fdf5e8369"
     "a4d06040f023954d7d327a23e40ab674dc637dc5dd367f3770d18f2a2927d09d"
     "8b256e3cb20cec0436f8579b2b1240c50222277f9f8e170d7406e843c93fdda1"
     "7fe9bd3da59b3a04af2b993d3b2a581b12f3f42cfaf8e38ae5429bac71fbba32"
     "dfe34802de7fc7cac8d42b3a72564eeb9b5d7fe87bfb4c925be87cba8fd8b591"
     "2bf94db18a907d4e2888b8aa0314b5a83040eca33187bfa7b9d1fcfba91cf769"
     "a6acf6c303985d7fb4c7d5bf1f04ce250b3acfaa9d6484c797fbd3765b076759"
     "d58605e0b9ce73d97fe12c0ceef18e0bf123684e7f5d75634b57645f48644758"
     "505a5967525e7f637467627773447f4f71430224afb8b281819db0bcaa959c8c"
     "909bb2b89a8eb8b0ae8a8894b596a8b78db9b0b00c1e81818181818181818181"
     "818181818181818181818181818181818181818181810a350202fdfe017ffe00"
     "030300ff000102fe000102ff000203fefd00ff02fefffe0182007964814f580f"
     "6f5e0d3ebbad811c47f7ca4a7dc86ae8c08bbdddaf9319d484ae4936bff1fc90"
     "8f56f7aa59403c23d4f33c5f2316ae8e1c1a1e7fe2a0b5f9334d215e082481d0"
     "20e05f7f811040a110b181d0404fb15fa16f6f5fc0a1d0109120c04f5f816329"
     "e90c6f15edc6bc0a3a2508debd031c5481f5191f135dad1714d5bce8e0831dee"},
    {Format::Q4_K, 0x18f30bf5f783ba7cull,
     "6532e43d01c0010001c0010055ff002235da0bcb8a5ccb8639e3e4dc26539858"
     "391858262be7bcfc59d504d72643d6b7a07dcf1baf8ab538729f95ff1f03858c"
     "ef7c6fb440bb5b1af46030ba1f1cb178e1dbcb6a1dd9f867f77ac717d660f63b"
     "01523e17a37ac5360c07f5cfa404342583b25a2b26d20a40137253e5d787d2c9"
     "570e82623754e851fd6fa384657319885b2e983901c1001b00c3010000ff3387"
     "8fac9f1f1f6f8cae8f4f5b3f4b5e9cae5e3fad9f8f2f2f4f9f4f7fab3fac8f8a"
     "0000000000f00000000000000000000000000000000000000000000000000000"
     "3f6e700c0dc96e2dd8bbb4934069bcd7948c2f049e9694f154162371a9c590d3"
     "7095f9957c5e4098caa298634085aadb037ca2ad9dec349295584179641bac70"},
    {Format::Q5_K, 0xc69e4e2ae509a3a6ull,
     "5e2ed83d01c0010001c0010055ff0022a8b77d571fbd7b06211e2a8fa480abdd"
     "0d4c1508211ee707d942a0be24044ac66bb4079514b7971b51e6d8b84cb730a0"
     "721fa03c46df88f7b2ba08ce4c95bb7e60ebaf274f147a70f33f49fe2f062907"
     "ef07cf778075a525f7c060743f2863f1d29686c429a2e1cdede48e1eabc0eb67"
     "12a55c1e46e58b5b071feb8e48086849065495573da4158037e4a6c99f0fa493"
     "ae1cf4b57e98c0a2dbbf4608dad723002c2aa53901c1001b00c3010100ff3387"
     "1393c391517913d3f3b1e1210191f3e3217193c3f3e121a1834101433163e323"
     "2f593f3e3fcf286c0f9eb76f87bc3a5dbd7f5a2e1f6f5f9f4f9fff467f592f25"
     "1010000010f00010101000001010100000101000101010000010001000000010"
     "6fdce00a0ba2de4ca178673590d369bf39194f092d2d38f1b72b56e2539a30b6"
     "e129f23be99c8120865420d6811946b716f9445b3bc9684439b083e2d81749e1"},
    {Format::Q6_K, 0xafa09fefc1a23ab4ull,
     "f18c00050a5090df750fbc100a2fb9fb5f5197a48d707f8fac5d958f943002ed"
     "352ebe9c52cb0ce20481701e83cba5da3ae066feed0f968d056212117d9712f7"
     "c491d01bb877d50cfd9cde4ef8f099722965645121f4f8a79f1038e1be0d8efb"
     "34db5dc59979413682f16dbb5a268251adcaf37c05b26d943e7d60dc463ea2e6"
     "778800d84854689ab54f6f08c6f769450a5e8a29bb5297d32ab4fc55c9d87555"
     "8083633a1fc22249014a41ddd198c1efafcb7cbee7a912be0c8e7260a6bede5e"
     "ff0101fffefd000009f68085000004fc4f26151c101812171d1a16181e161e19"
     "1c1919161b18101712161712131e101c131f0b0e1c1000061b0ffaf406020306"
     "0c1dc6e39deb0bf1f1240d45398d023e3b1b0e49808496f40c4813704fbb0047"
     "125ebd9e71ded696f07d4149348bfa5b9f047dcc0fa050184dd8f952e1aa33fc"
     "818b07da658d5979b8605858f3a2831c78b88080808080008080404080808080"
     "80804080c00080c0c000008040c0004000c083572453b3fec7633e4f6c88c456"
     "7f3d06748cbeb4f607839b6e0f6b4532b743fbfb050502029902000072800505"
     "f40e3422"},
    {Format::Q2_K, 0x6b8eb56f33980463ull,
     "00000000000000001111cdff00000000816eb32fbaa79f6942bc9cff31149aa6"
     "f262769143ae6b2fd64d00ad31248d698c8e7a3623ce3e451d4659d1eda4cdf2"
     "503483415846d941f2718d8b594121911f44bf450000101000000c000000fedf"
     "111111220e0e0f02038a0e0e0e060a06060a0e0e4683ce4e8fc3c3070e874bce"
     "034e0f8e479be893733e0ba3eedfad59049aafee19bb93b1bbf9599c95615164"
     "5a2db84ce33ea841"},
    {Format::Q3_K, 0x532480660e0707ccull,
     "859a507a3290563f1cb317b2c9ed86f8f3bbebf6dfe159f927bc5ec1dafab4fd"
     "aa3e64f9e2fc99821befdf2ce9dfd73f293c659faeb07bf31566aeb4eff99708"
     "2096e6a57fd561846012e8ec8704d39a4fd7387c8e6249795d4ce1281e2efa0a"
     "20e040000f0f10f0a6968a4ad43a98986818d8f0b8d87838e8a888b8787818c8"
     "a8f0c8d81890b07830780050d018040504000000050504000100010105050140"
     "85c4048080808400c44580c584454b2f10f273bc8317acca1a568821ea7c1e3e"
     "4c7e7dfd6e4366dd8bd3eb397fc70f0fc1011010d731a9a9728a7036"},
    {Format::IQ4_NL, 0x271196bd65795c07ull,
     "cc1fc48daf5eed8ffff4bb31228f55014a796c9bddf1bfe2e71b3207be10f111"
     "eecb153be4a30f4210c4f0555a57cde0fb51103cdb74e6840479a23fc436b3ec"
     "08a5d530eeef3687a8abffe31384d246b6a93984b809cacfcab32dbaf1b2d2fa"
     "4f9220daf0f8022f52fad0ed0c949d1ee4e39ade84ff2d0eddccb8d85e86e9a5"
     "b7f37cbedec11fbc0fa84b709297f172d1a32112201200110212110113310322"
     "1232fa23121332202001021322112130113122230c1e00000000000000000000"
     "0000000000000ab58888888888808888888888888888888883004fdef04efe69"
     "3f0e395d2312a04a0d2737b65d69e8ff6f62590ea2e3d3854b2953110a2420e4"
     "1bf5feef30194d9119b230e4ed0e5b290679afaa96e323a9ac4b39655308aa6e"},
    {Format::IQ4_XS, 0x31fd3d0721260ae2ull,
     "3b269a61000f0df0888888888888888888888888888888888888888888888888"
     "88888888888888882d5432a5d2666967acd3da63325bca758888888888888888"
     "8888888888888888eed42485c356a7a93985a818cabecab4f1b2d2fa4e9220da"
     "f0f8022f52fad0ed88888888888888888888888888888888b7f47caedec21fbc"
     "0ea85b719297f172372219a21f6f003110011000000001010000022002110121"
     "01022110100001021100101000201112dddddddddddddddddddddddddddddddd"
     "8888888888808888888888888888888888888888888888888888888888888888"
     "5d69e8ff6f62590ea2e3d3954b29531110f30bf5ffff200a3ea00ab120f3fe0f"
     "0679afbaa6f312a9ad4b29655208bb6e"},
};

// f32 bits -> ggml's f16 bits, ggml's bf16 bits.
struct ConvGolden {
  uint32_t f32;
  uint16_t f16;
  uint16_t bf16;
};
const ConvGolden kConvGolden[] = {
    {0x00000000u, 0x0000u, 0x0000u},
    {0x80000000u, 0x8000u, 0x8000u},
    {0x3f800000u, 0x3c00u, 0x3f80u},
    {0x477fe000u, 0x7bffu, 0x4780u},
    {0x477fefffu, 0x7bffu, 0x4780u},
    {0x477ff000u, 0x7c00u, 0x4780u},
    {0x7f7fffffu, 0x7c00u, 0x7f80u},
    {0x7f800000u, 0x7c00u, 0x7f80u},
    {0xff800000u, 0xfc00u, 0xff80u},
    {0x7fc00000u, 0x7e00u, 0x7fc0u},
    {0x7f800001u, 0x7e00u, 0x7fc0u},
    {0xffc0deadu, 0xfe00u, 0xffc0u},
    {0x38800000u, 0x0400u, 0x3880u},
    {0x387fffffu, 0x0400u, 0x3880u},
    {0x33800000u, 0x0001u, 0x3380u},
    {0x33000000u, 0x0000u, 0x3300u},
    {0x33000001u, 0x0001u, 0x3300u},
    {0x337fffffu, 0x0001u, 0x3380u},
    {0x3f801000u, 0x3c00u, 0x3f80u},
    {0x3f803000u, 0x3c02u, 0x3f80u},
    {0x3f801001u, 0x3c01u, 0x3f80u},
    {0x3f808000u, 0x3c04u, 0x3f80u},
    {0x3f818000u, 0x3c0cu, 0x3f82u},
    {0x3f808001u, 0x3c04u, 0x3f81u},
    {0x00000001u, 0x0000u, 0x0000u},
    {0x007fffffu, 0x0000u, 0x0080u},
    {0xc0490fdbu, 0xc248u, 0xc049u},
    {0x3c00a000u, 0x2005u, 0x3c01u},
    {0x38802000u, 0x0401u, 0x3880u},
    {0x387fe000u, 0x0400u, 0x3880u},
    {0x377fe000u, 0x0100u, 0x3780u},
    {0x7f7f8000u, 0x7c00u, 0x7f80u},
};
// clang-format on

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

uint64_t fnv1a(const std::vector<float>& y) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const float v : y) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    for (int k = 0; k < 4; ++k) {
      h ^= (b >> (8 * k)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

std::vector<float> golden_inputs() {
  std::vector<float> x(kGoldenElems);
  for (int i = 0; i < kGoldenElems; ++i) x[i] = golden_input(static_cast<uint32_t>(i));
  return x;
}

TEST(Golden, CoversEveryQuantizedFormat) {
  for (const Format f : kAllFormats) {
    if (!traits(f).quantized) continue;
    bool found = false;
    for (const auto& g : kGolden) found = found || g.format == f;
    EXPECT_TRUE(found) << traits(f).name;
  }
}

TEST(Golden, InputIsNeverAllZeroAndSpansRanges) {
  const auto x = golden_inputs();
  float lo = x[0], hi = x[0];
  for (const float v : x) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GT(hi, 39.0f);
  EXPECT_LT(lo, -40.0f);
}

TEST(Golden, QuantizeMatchesGgmlBytes) {
  const auto x = golden_inputs();
  for (const auto& g : kGolden) {
    const auto& t = traits(g.format);
    const auto want = from_hex(g.hex);
    ASSERT_EQ(want.size(), row_bytes(g.format, kGoldenElems)) << t.name;
    const auto got = quantize(g.format, x);
    ASSERT_EQ(got.size(), want.size()) << t.name;
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(got[k], want[k]) << t.name << ": byte " << k << " (block " << k / t.block_bytes
                                 << ", offset " << k % t.block_bytes << ")";
    }
  }
}

TEST(Golden, DequantizeMatchesGgml) {
  for (const auto& g : kGolden) {
    const auto y = dequantize(g.format, from_hex(g.hex), kGoldenElems);
    EXPECT_EQ(fnv1a(y), g.dequant_fnv) << traits(g.format).name;
  }
}

TEST(Golden, HalfConversionsMatchGgml) {
  for (const auto& c : kConvGolden) {
    const float f = std::bit_cast<float>(c.f32);
    EXPECT_EQ(f32_to_f16(f), c.f16) << std::hex << c.f32;
    EXPECT_EQ(f32_to_bf16(f), c.bf16) << std::hex << c.f32;
  }
}

}  // namespace
}  // namespace blockq
