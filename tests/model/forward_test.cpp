// CPU forward and config tests on synthetic models: the modes agree, the KV
// cache is consistent, logits are varied, the synthetic file is what the
// config reads, and bad files give blockq::Error naming the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "model/config.hpp"
#include "model/cpu_forward.hpp"
#include "model/synth.hpp"
#include "oracle.hpp"
#include "util/error.hpp"

namespace blockq::model {
namespace {

using testing::synth_file;
using testing::temp_dir;

std::string tiny(Arch arch, Format type, uint64_t seed = 3) {
  SynthOptions o;
  o.arch = arch;
  o.type = type;
  o.seed = seed;
  return synth_file(fmt::format("fwd-{}-{}-{}", int(arch), traits(type).name, seed), o);
}

double stddev(std::span<const double> v) {
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size()));
}

TEST(Forward, ModesAgreeAndLogitsVary) {
  for (Arch arch : {Arch::Llama, Arch::Qwen2}) {
    const gguf::GgufFile f = gguf::GgufFile::open(tiny(arch, Format::Q8_0));
    CpuModel m32(f, {ForwardMode::F32, 64, 1}), m64(f, {ForwardMode::F64, 64, 1});
    const std::vector<TokenId> toks = {1, 300, 42, 7, 900, 300};
    std::vector<TokenId> argmax;
    for (TokenId t : toks) {
      m32.eval(t);
      m64.eval(t);
      const auto a = m32.logits_f64(), b = m64.logits_f64();
      double err = 0;
      for (size_t i = 0; i < a.size(); ++i) err = std::max(err, std::fabs(a[i] - b[i]));
      EXPECT_LT(err, 1e-3) << "f32 vs f64 logits";
      EXPECT_GT(stddev(b), 0.5);
      EXPECT_LT(stddev(b), 20.0);
      argmax.push_back(TokenId(std::max_element(b.begin(), b.end()) - b.begin()));
    }
    std::sort(argmax.begin(), argmax.end());
    EXPECT_GT(std::unique(argmax.begin(), argmax.end()) - argmax.begin(), 2);
  }
}

TEST(Forward, KvCacheIsConsistent) {
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Llama, Format::Q4_K));
  CpuModel m(f, {ForwardMode::F64, 32, 1});
  const std::vector<TokenId> toks = {5, 6, 7, 8};
  const std::vector<double> once(m.eval(toks).begin(), m.eval(toks).end());
  EXPECT_EQ(m.n_past(), 8u);
  m.reset();
  m.eval(toks);
  m.eval(toks);
  const auto again = m.logits_f64();
  for (size_t i = 0; i < again.size(); ++i) ASSERT_FLOAT_EQ(float(again[i]), float(once[i]));
  m.reset();
  EXPECT_THROW(m.eval(TokenId(5000)), Error);
  for (int i = 0; i < 32; ++i) m.eval(1);
  EXPECT_THROW(m.eval(1), Error);  // cache full
}

TEST(Forward, GreedyIsDeterministic) {
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Qwen2, Format::Q4_0));
  CpuModel a(f, {ForwardMode::F32, 64, 1}), b(f, {ForwardMode::F32, 64, 2});
  const std::vector<TokenId> prompt = {10, 20, 30};
  EXPECT_EQ(generate_greedy(a, prompt, 12), generate_greedy(b, prompt, 12));
}

TEST(Config, ReadsSynthFile) {
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Qwen2, Format::Q8_0));
  const ModelConfig c = config_from_gguf(f);
  EXPECT_EQ(c.arch, Arch::Qwen2);
  EXPECT_EQ(c.n_embd, 256u);
  EXPECT_EQ(c.n_layer, 2u);
  EXPECT_EQ(c.n_head, 4u);
  EXPECT_EQ(c.n_head_kv, 2u);
  EXPECT_EQ(c.head_dim, 64u);
  EXPECT_EQ(c.n_ff, 512u);
  EXPECT_EQ(c.n_vocab, 1024u);
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(c.rope_mode, RopeMode::Neox);
  EXPECT_EQ(layer_tensor_name(3, "attn_q", "bias"), "blk.3.attn_q.bias");
}

// Rewrites a synthetic file through `edit` (metadata and tensors copied).
std::string rewrite(const std::string& src, const std::string& name,
                    const std::function<void(gguf::GgufWriter&, const gguf::TensorInfo&,
                                             const gguf::GgufFile&)>& per_tensor,
                    const std::function<void(gguf::GgufWriter&)>& meta = {}) {
  const gguf::GgufFile f = gguf::GgufFile::open(src);
  gguf::GgufWriter w;
  w.copy_metadata(f);
  if (meta) meta(w);
  for (const auto& t : f.tensors()) per_tensor(w, t, f);
  const std::string out = (temp_dir() / (name + ".gguf")).string();
  w.write(out);
  return out;
}

void expect_error(const std::string& path, const std::string& needle) {
  try {
    config_from_gguf(gguf::GgufFile::open(path));
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Config, ErrorsNameTheProblem) {
  const std::string src = tiny(Arch::Llama, Format::Q8_0);
  const auto copy = [](gguf::GgufWriter& w, const gguf::TensorInfo& t, const gguf::GgufFile& f) {
    w.add_tensor_view(t.name, t.shape, t.format, f.tensor_data(t));
  };
  expect_error(rewrite(src, "bad-arch", copy,
                       [](gguf::GgufWriter& w) { w.set_string("general.architecture", "gpt2"); }),
               "'gpt2' is not supported");
  expect_error(rewrite(src, "missing", [&](gguf::GgufWriter& w, const gguf::TensorInfo& t,
                                           const gguf::GgufFile& f) {
                 if (t.name != "blk.1.ffn_up.weight") copy(w, t, f);
               }),
               "tensor 'blk.1.ffn_up.weight' is missing");
  expect_error(rewrite(src, "shape", [&](gguf::GgufWriter& w, const gguf::TensorInfo& t,
                                         const gguf::GgufFile& f) {
                 if (t.name == "blk.0.attn_k.weight") {
                   std::vector<uint8_t> bytes(row_bytes(t.format, 256) * 256);
                   w.add_tensor(t.name, {256, 256}, t.format, bytes);
                 } else {
                   copy(w, t, f);
                 }
               }),
               "'blk.0.attn_k.weight' has shape [256, 256], expected [256, 128]");
  expect_error(rewrite(src, "yarn", copy,
                       [](gguf::GgufWriter& w) { w.set_string("llama.rope.scaling.type", "yarn"); }),
               "'yarn' is not supported");
}

TEST(Synth, FallbackAndTokenizer) {
  EXPECT_EQ(synth_weight_format(Format::Q4_K, 960), Format::Q5_0);
  EXPECT_EQ(synth_weight_format(Format::Q6_K, 960), Format::Q8_0);
  EXPECT_EQ(synth_weight_format(Format::Q2_K, 960), Format::IQ4_NL);
  EXPECT_EQ(synth_weight_format(Format::Q3_K, 896), Format::IQ4_NL);
  EXPECT_EQ(synth_weight_format(Format::IQ4_XS, 960), Format::IQ4_NL);
  EXPECT_EQ(synth_weight_format(Format::Q3_K, 48), Format::F16);
  EXPECT_EQ(synth_weight_format(Format::Q4_K, 2560), Format::Q4_K);
  EXPECT_EQ(synth_weight_format(Format::Q8_0, 48), Format::F16);
  EXPECT_THROW(synth_preset("huge"), Error);
  for (TokenizerStyle st : {TokenizerStyle::Llama3, TokenizerStyle::Qwen2, TokenizerStyle::Smollm,
                            TokenizerStyle::Spm}) {
    const Tokenizer t(synth_tokenizer(st, 1024));
    EXPECT_EQ(t.n_vocab(), 1024u);
    const std::string text = "The keeper of the light was never really alone.";
    const auto ids = t.tokenize(text, false);
    EXPECT_LE(ids.size(), 16u) << tokenizer_style_name(st);  // 10 words
    EXPECT_EQ(t.detokenize(ids), text) << tokenizer_style_name(st);
  }
  // Same options, same bytes.
  SynthOptions o;
  o.seed = 11;
  o.threads = 1;
  const std::string a = (temp_dir() / "det-a.gguf").string(), b = (temp_dir() / "det-b.gguf").string();
  synth_model(o, a);
  o.threads = 3;
  const SynthReport r = synth_model(o, b);
  const auto fa = gguf::GgufFile::open(a), fb = gguf::GgufFile::open(b);
  ASSERT_EQ(fa.bytes().size(), fb.bytes().size());
  EXPECT_TRUE(std::equal(fa.bytes().begin(), fa.bytes().end(), fb.bytes().begin()));
  EXPECT_GT(r.n_params, 1'000'000u);
}

}  // namespace
}  // namespace blockq::model
