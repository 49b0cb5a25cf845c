// TokenizerData to and from GGUF metadata (the tokenizer.ggml.* keys and
// tokenizer.chat_template).
#include "gguf/gguf.hpp"
#include "model/tokenizer.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {
constexpr const char* kModel = "tokenizer.ggml.model";
constexpr const char* kPre = "tokenizer.ggml.pre";
constexpr const char* kTokens = "tokenizer.ggml.tokens";
constexpr const char* kScores = "tokenizer.ggml.scores";
constexpr const char* kTypes = "tokenizer.ggml.token_type";
constexpr const char* kMerges = "tokenizer.ggml.merges";
constexpr const char* kBos = "tokenizer.ggml.bos_token_id";
constexpr const char* kEos = "tokenizer.ggml.eos_token_id";
constexpr const char* kUnk = "tokenizer.ggml.unknown_token_id";
constexpr const char* kPad = "tokenizer.ggml.padding_token_id";
constexpr const char* kEot = "tokenizer.ggml.eot_token_id";
constexpr const char* kAddBos = "tokenizer.ggml.add_bos_token";
constexpr const char* kAddEos = "tokenizer.ggml.add_eos_token";
constexpr const char* kAddPrefix = "tokenizer.ggml.add_space_prefix";
constexpr const char* kTemplate = "tokenizer.chat_template";
}  // namespace

TokenizerData from_gguf(const gguf::GgufFile& f) {
  TokenizerData d;
  d.model = f.get_string(kModel);
  d.pre = f.get_string_or(kPre, "");
  d.tokens = f.get_array_strings(kTokens);
  if (const gguf::Value* v = f.find(kScores)) {
    const auto* arr = std::get_if<gguf::Array>(v);
    BQ_CHECK(arr, "{}: {} is {}, not an array", f.name(), kScores, gguf::describe_type(*v));
    if (arr->elem_type() == gguf::ValueType::F32) {
      d.scores = f.get_array_f32(kScores);
    } else {
      for (int64_t s : f.get_array_ints(kScores)) d.scores.push_back(float(s));
    }
  }
  if (f.has(kTypes)) d.token_types = f.get_array_i32(kTypes);
  if (f.has(kMerges)) d.merges = f.get_array_strings(kMerges);
  const auto id = [&](const char* key, std::optional<TokenId>& dst) {
    if (f.has(key)) dst = TokenId(f.get_u32(key));
  };
  id(kBos, d.bos);
  id(kEos, d.eos);
  id(kUnk, d.unk);
  id(kPad, d.pad);
  id(kEot, d.eot);
  if (f.has(kAddBos)) d.add_bos = f.get_bool(kAddBos);
  if (f.has(kAddEos)) d.add_eos = f.get_bool(kAddEos);
  if (f.has(kAddPrefix)) d.add_space_prefix = f.get_bool(kAddPrefix);
  d.chat_template = f.get_string_or(kTemplate, "");
  return d;
}

void to_gguf(const TokenizerData& d, gguf::GgufWriter& w) {
  w.set_string(kModel, d.model);
  if (!d.pre.empty()) w.set_string(kPre, d.pre);
  w.set_array_strings(kTokens, d.tokens);
  if (!d.scores.empty()) w.set_array_f32(kScores, d.scores);
  if (!d.token_types.empty()) w.set_array_i32(kTypes, d.token_types);
  if (!d.merges.empty()) w.set_array_strings(kMerges, d.merges);
  const auto id = [&](const char* key, const std::optional<TokenId>& v) {
    if (v) w.set_u32(key, uint32_t(*v));
  };
  id(kBos, d.bos);
  id(kEos, d.eos);
  id(kUnk, d.unk);
  id(kPad, d.pad);
  id(kEot, d.eot);
  if (d.add_bos) w.set_bool(kAddBos, *d.add_bos);
  if (d.add_eos) w.set_bool(kAddEos, *d.add_eos);
  if (d.add_space_prefix) w.set_bool(kAddPrefix, *d.add_space_prefix);
  if (!d.chat_template.empty()) w.set_string(kTemplate, d.chat_template);
}

}  // namespace blockq::model
