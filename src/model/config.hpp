// The hyper-parameters of a llama or qwen2 decoder read from GGUF metadata,
// the GGUF tensor names of each weight, and the shapes they must have.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace blockq::gguf {
class GgufFile;
}

namespace blockq::model {

enum class Arch { Llama, Qwen2 };
// How RoPE pairs the values of a head: Normal rotates (2i, 2i+1) (llama);
// Neox rotates (i, i + n_rot/2) (qwen2), as llama.cpp's rope types.
enum class RopeMode { Normal, Neox };
enum class RopeScaling { None, Linear };
// How the KV cache stores K and V: f32, or f16 (rounded to nearest even and
// packed two per u32 on the GPU; llama.cpp's default).
enum class KvType { F32, F16 };
const char* kv_type_name(KvType t);                 // "f32" or "f16"
KvType kv_type_from_name(const std::string& name);  // throws blockq::Error for another name

struct ModelConfig {
  Arch arch = Arch::Llama;
  std::string arch_name;     // general.architecture
  uint32_t n_vocab = 0;      // {arch}.vocab_size, else the token list's length
  uint32_t n_embd = 0;       // {arch}.embedding_length
  uint32_t n_layer = 0;      // {arch}.block_count
  uint32_t n_head = 0;       // {arch}.attention.head_count
  uint32_t n_head_kv = 0;    // {arch}.attention.head_count_kv (default n_head)
  uint32_t n_ff = 0;         // {arch}.feed_forward_length
  uint32_t head_dim = 0;     // {arch}.attention.key_length, else n_embd / n_head
  uint32_t n_rot = 0;        // {arch}.rope.dimension_count, else head_dim (must equal it)
  uint32_t n_ctx_train = 0;  // {arch}.context_length
  float rope_freq_base = 10000.0f;  // {arch}.rope.freq_base
  RopeScaling rope_scaling = RopeScaling::None;
  float rope_freq_scale = 1.0f;     // 1 / {arch}.rope.scaling.factor (linear)
  float rms_eps = 1e-5f;            // {arch}.attention.layer_norm_rms_epsilon
  RopeMode rope_mode = RopeMode::Normal;
  bool tied_embeddings = false;     // no output.weight: the lm_head is token_embd
  bool qkv_bias = false;            // attn_q/k/v.bias present (qwen2)
  bool rope_freqs = false;          // rope_freqs.weight present (Llama 3.1-style scaling)

  uint32_t n_embd_q() const { return n_head * head_dim; }
  uint32_t n_embd_kv() const { return n_head_kv * head_dim; }
  uint32_t n_gqa() const { return n_head / n_head_kv; }
};

// Reads and checks the hyper-parameters (and which optional tensors exist).
// Throws blockq::Error for an unsupported architecture or rope scaling, a
// missing key, or inconsistent values, naming the file and key.
ModelConfig config_from_gguf(const gguf::GgufFile& file);

// GGUF tensor names: "token_embd.weight", "output_norm.weight",
// "output.weight", "rope_freqs.weight", and per layer "blk.N.<name>.weight"
// (or ".bias") with name attn_norm, attn_q, attn_k, attn_v, attn_output,
// ffn_norm, ffn_gate, ffn_up, ffn_down.
std::string layer_tensor_name(uint32_t layer, const char* name, const char* suffix = "weight");

// One tensor the model needs, with its shape in ggml order (shape[0] is the
// row length).
struct TensorSpec {
  std::string name;
  std::vector<uint64_t> shape;
  bool is_norm_or_bias = false;  // 1-D, stored F32
};

// Every tensor of the model in file order: token_embd, the layers, output_norm,
// output (unless tied), rope_freqs (if used).
std::vector<TensorSpec> expected_tensors(const ModelConfig& cfg);

// Checks that every expected tensor exists with its expected shape; throws
// blockq::Error naming the tensor and the expected and actual shapes.
void check_tensors(const ModelConfig& cfg, const gguf::GgufFile& file);

}  // namespace blockq::model
