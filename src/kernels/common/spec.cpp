// Canonical names of kernel specs, for the pipeline cache and labels.
#include "kernels/common/spec.hpp"

#include <fmt/format.h>

namespace blockq {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::Matvec: return "matvec";
    case Op::Gemm: return "gemm";
    case Op::Gather: return "gather";
    case Op::Embed: return "embed";
    case Op::RmsNorm: return "rmsnorm";
    case Op::Rope: return "rope";
    case Op::Attention: return "attention";
    case Op::AttentionCombine: return "attention_combine";
    case Op::AttentionRows: return "attention_rows";
    case Op::SiluGate: return "silu_gate";
    case Op::Softmax: return "softmax";
    case Op::Add: return "add";
    case Op::Copy: return "copy";
    case Op::SplitSum: return "split_sum";
    case Op::Rows: return "rows";
    case Op::QuantX: return "xquant";
    case Op::SampleTopK: return "sample_topk";
    case Op::SamplePick: return "sample_pick";
    case Op::SamplePenalty: return "sample_penalty";
    case Op::SampleBias: return "sample_bias";
  }
  return "?";
}

std::string WeightKind::name() const {
  if (!onnx) return std::string(traits(format).name);
  return fmt::format("onnx{}b{}{}", bits, block_size, zero_points ? "zp" : "");
}

std::string KernelSpec::key() const {
  static const char* pro[] = {"", "+rmsnorm"};
  static const char* epi[] = {"store", "acc", "silu_gate", "rope"};
  std::string s = fmt::format("{}.{}.n{}.k{}.m{}.wg{}.tpr{}.tile{}.tok{}.u{}", op_name(op), weight.name(),
                              n, k, m, wg, tpr, tile, tokens, unroll);
  if (rpl != 1) s += fmt::format(".rpl{}", rpl);
  if (splits != 1) s += fmt::format(".sk{}", splits);
  if (tile_m || tile_n || reg_m || reg_n) s += fmt::format(".t{}x{}.r{}x{}", tile_m, tile_n, reg_m, reg_n);
  if (offsets != Offsets{}) s += fmt::format(".off{}.{}.{}.row{}", offsets.q, offsets.k, offsets.v, offsets.row);
  s += fmt::format(".g{}", max_groups);
  if (features.subgroups) s += ".sg";
  if (features.f16) s += ".f16";
  if (features.subgroup_matrix) s += ".sgmat";
  if (features.dot4) s += ".i8";
  s += fmt::format(".{}{}", pro[static_cast<int>(hooks.prologue)], epi[static_cast<int>(hooks.epilogue)]);
  if (hooks.bias) s += "+bias";
  if (hooks.prologue == Prologue::RmsNorm) s += fmt::format(".eps{:g}", hooks.eps);
  if (hooks.epilogue == Epilogue::Rope)
    s += fmt::format(".rope{}.hd{}.rot{}.b{:g}.s{:g}", hooks.rope_mode == RopeMode::Neox ? "neox" : "norm",
                     hooks.head_dim, hooks.n_rot, hooks.rope_base, hooks.rope_scale);
  if (hooks.epilogue == Epilogue::Rope && hooks.rope_rows) s += fmt::format(".rr{}", hooks.rope_rows);
  if (hooks.kv_n)
    s += fmt::format(".kv{}.{}.{}.ctx{}{}", hooks.kv_n, hooks.kv_k, hooks.kv_v, hooks.kv_ctx, hooks.kv_f16 ? "h" : "f");
  if (variant) s += fmt::format(".v{}", variant);
  return s;
}

}  // namespace blockq
