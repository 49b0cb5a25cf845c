// ModelConfig from GGUF metadata, tensor names and expected shapes.
#include "model/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gguf/gguf.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

std::string shape_str(const std::vector<uint64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

}  // namespace

const char* kv_type_name(KvType t) { return t == KvType::F16 ? "f16" : "f32"; }

KvType kv_type_from_name(const std::string& name) {
  if (name == "f16") return KvType::F16;
  if (name == "f32") return KvType::F32;
  fail("KV cache type '{}' is not supported (use f16 or f32)", name);
}

std::string layer_tensor_name(uint32_t layer, const char* name, const char* suffix) {
  return fmt::format("blk.{}.{}.{}", layer, name, suffix);
}

ModelConfig config_from_gguf(const gguf::GgufFile& f) {
  ModelConfig c;
  c.arch_name = f.get_string("general.architecture");
  if (c.arch_name == "llama") {
    c.arch = Arch::Llama;
    c.rope_mode = RopeMode::Normal;
  } else if (c.arch_name == "qwen2") {
    c.arch = Arch::Qwen2;
    c.rope_mode = RopeMode::Neox;
  } else {
    fail("{}: general.architecture = '{}' is not supported (blockq runs 'llama' and 'qwen2')",
         f.name(), c.arch_name);
  }
  const std::string a = c.arch_name + ".";
  c.n_embd = f.get_u32(a + "embedding_length");
  c.n_layer = f.get_u32(a + "block_count");
  c.n_head = f.get_u32(a + "attention.head_count");
  c.n_head_kv = f.get_u32_or(a + "attention.head_count_kv", c.n_head);
  c.n_ff = f.get_u32(a + "feed_forward_length");
  c.n_ctx_train = f.get_u32(a + "context_length");
  c.rms_eps = f.get_f32(a + "attention.layer_norm_rms_epsilon");
  c.rope_freq_base = f.get_f32_or(a + "rope.freq_base", 10000.0f);
  BQ_CHECK(c.n_embd > 0 && c.n_layer > 0 && c.n_head > 0 && c.n_ff > 0,
           "{}: embedding_length, block_count, head_count and feed_forward_length must be "
           "positive (got {}, {}, {}, {})",
           f.name(), c.n_embd, c.n_layer, c.n_head, c.n_ff);
  BQ_CHECK(c.n_head_kv > 0 && c.n_head % c.n_head_kv == 0,
           "{}: head_count {} is not a multiple of head_count_kv {}", f.name(), c.n_head,
           c.n_head_kv);
  c.head_dim = f.get_u32_or(a + "attention.key_length", c.n_embd / c.n_head);
  const uint32_t v_len = f.get_u32_or(a + "attention.value_length", c.head_dim);
  BQ_CHECK(v_len == c.head_dim, "{}: attention.value_length {} differs from key_length {}",
           f.name(), v_len, c.head_dim);
  c.n_rot = f.get_u32_or(a + "rope.dimension_count", c.head_dim);
  BQ_CHECK(c.n_rot == c.head_dim && c.head_dim % 2 == 0,
           "{}: rope.dimension_count {} must equal the head size {} (an even number)", f.name(),
           c.n_rot, c.head_dim);

  const std::string scaling = f.get_string_or(a + "rope.scaling.type", "none");
  float factor = f.get_f32_or(a + "rope.scaling.factor", 0.0f);
  if (factor == 0.0f) factor = f.get_f32_or(a + "rope.scale_linear", 0.0f);
  if (scaling == "linear" || (scaling == "none" && factor != 0.0f && factor != 1.0f)) {
    // llama.cpp applies a factor as linear scaling unless the type says otherwise.
    c.rope_scaling = factor != 0.0f && factor != 1.0f ? RopeScaling::Linear : RopeScaling::None;
    c.rope_freq_scale = factor != 0.0f ? 1.0f / factor : 1.0f;
  } else if (scaling != "none") {
    fail("{}: {}rope.scaling.type = '{}' is not supported (none and linear are; Llama 3.1-style "
         "scaling comes as the rope_freqs.weight tensor)",
         f.name(), a, scaling);
  }

  if (f.has(a + "vocab_size")) {
    c.n_vocab = f.get_u32(a + "vocab_size");
  } else if (f.has("tokenizer.ggml.tokens")) {
    c.n_vocab = uint32_t(f.get_array("tokenizer.ggml.tokens").size());
  } else if (const auto* t = f.find_tensor("token_embd.weight"); t && t->shape.size() == 2) {
    c.n_vocab = uint32_t(t->shape[1]);
  }
  BQ_CHECK(c.n_vocab > 0, "{}: the vocabulary size is unknown ({}vocab_size, tokenizer.ggml.tokens "
           "and token_embd.weight are all missing)", f.name(), a);

  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  c.qkv_bias = f.find_tensor(layer_tensor_name(0, "attn_q", "bias")) != nullptr;
  c.rope_freqs = f.find_tensor("rope_freqs.weight") != nullptr;
  check_tensors(c, f);
  return c;
}

std::vector<TensorSpec> expected_tensors(const ModelConfig& c) {
  const uint64_t e = c.n_embd, q = c.n_embd_q(), kv = c.n_embd_kv(), ff = c.n_ff, v = c.n_vocab;
  std::vector<TensorSpec> t;
  t.push_back({"token_embd.weight", {e, v}});
  for (uint32_t l = 0; l < c.n_layer; ++l) {
    t.push_back({layer_tensor_name(l, "attn_norm"), {e}, true});
    t.push_back({layer_tensor_name(l, "attn_q"), {e, q}});
    t.push_back({layer_tensor_name(l, "attn_k"), {e, kv}});
    t.push_back({layer_tensor_name(l, "attn_v"), {e, kv}});
    if (c.qkv_bias) {
      t.push_back({layer_tensor_name(l, "attn_q", "bias"), {q}, true});
      t.push_back({layer_tensor_name(l, "attn_k", "bias"), {kv}, true});
      t.push_back({layer_tensor_name(l, "attn_v", "bias"), {kv}, true});
    }
    t.push_back({layer_tensor_name(l, "attn_output"), {q, e}});
    t.push_back({layer_tensor_name(l, "ffn_norm"), {e}, true});
    t.push_back({layer_tensor_name(l, "ffn_gate"), {e, ff}});
    t.push_back({layer_tensor_name(l, "ffn_up"), {e, ff}});
    t.push_back({layer_tensor_name(l, "ffn_down"), {ff, e}});
  }
  t.push_back({"output_norm.weight", {e}, true});
  if (!c.tied_embeddings) t.push_back({"output.weight", {e, v}});
  if (c.rope_freqs) t.push_back({"rope_freqs.weight", {c.n_rot / 2}, true});
  return t;
}

void check_tensors(const ModelConfig& c, const gguf::GgufFile& f) {
  for (const TensorSpec& s : expected_tensors(c)) {
    const gguf::TensorInfo* t = f.find_tensor(s.name);
    BQ_CHECK(t, "{}: tensor '{}' is missing (expected shape {})", f.name(), s.name,
             shape_str(s.shape));
    BQ_CHECK(t->shape == s.shape, "{}: tensor '{}' has shape {}, expected {}", f.name(), s.name,
             shape_str(t->shape), shape_str(s.shape));
  }
}

}  // namespace blockq::model
