// The int8 gemm kernels' constants and bindings (gemm_i8.wgsl and
// gemm_i8_pipe.wgsl): tile TM x TN of RM x RN register blocks, KS blocks of
// 32 a step; x arrives quantized in xq (kernels/matvec/xquant.wgsl, M =
// params.m rows): codes [M][K / 16] vec4<u32>, then meta [M][K / 32]
// vec4<u32> (bitcast scale, code sums of each half, 0).
const K: u32 = {{K}};           // reduction length, a multiple of 32
const KB: u32 = K / 32u;        // blocks per row
const KS: u32 = {{KS}};          // blocks a step (divides KB)
const K16: u32 = K / 16u;       // code vec4s per x row
const TM: u32 = {{TM}};
const TN: u32 = {{TN}};
const RM: u32 = {{RM}};         // multiples of 4
const RN: u32 = {{RN}};
const TMT: u32 = TM / RM;
const TNT: u32 = TN / RN;
const WG: u32 = TMT * TNT;
const XP4: u32 = TM / 4u + 1u;  // xs stride per word in vec4 (padded)
const WP4: u32 = TN / 4u + 1u;  // ws stride per word in vec4 (padded)
const OFF: i32 = {{OFF}};
// f32(i) for |i| < 2^22, exactly, without a conversion: the bits of
// MAGIC + i as f32 are 1.5 * 2^23 + i; less MAGIC_F they are i (a block's
// sums stay below 32 * 128 * 127 + OFF * 32 * 127).
const MAGIC: i32 = 0x4b400000;
const MAGIC_F: f32 = 12582912.0;

struct Params { row0: u32, rows: u32, m: u32, n: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> xq: array<vec4<u32>>;  // codes [M][K / 16], meta [M][K / 32]
{{BINDINGS}}
