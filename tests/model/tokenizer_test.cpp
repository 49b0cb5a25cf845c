// Unit tests of the pre-tokenizers, the BPE and SentencePiece tokenizers,
// special tokens, decoding and chat templates, on small hand-made vocabularies.
#include <gtest/gtest.h>

#include "model/chat_template.hpp"
#include "model/pretokenize.hpp"
#include "model/tokenizer.hpp"
#include "model/unicode.hpp"
#include "util/error.hpp"

namespace blockq::model {
namespace {

using Words = std::vector<std::string>;

TEST(Unicode, Classes) {
  EXPECT_EQ(cp_class('a'), CpClass::Letter);
  EXPECT_EQ(cp_class(0xe9), CpClass::Letter);    // é
  EXPECT_EQ(cp_class(0x4e2d), CpClass::Letter);  // 中
  EXPECT_EQ(cp_class('7'), CpClass::Number);
  EXPECT_EQ(cp_class(0x0663), CpClass::Number);  // Arabic-Indic three
  EXPECT_EQ(cp_class('!'), CpClass::Punctuation);
  EXPECT_EQ(cp_class('$'), CpClass::Symbol);
  EXPECT_EQ(cp_class(0x0301), CpClass::Mark);
  EXPECT_EQ(cp_class(0x0378), CpClass::Undefined);
  EXPECT_TRUE(is_whitespace(0x3000));
  EXPECT_FALSE(is_whitespace(0x200b));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(cp_to_byte(byte_to_cp(uint8_t(b))), b);
  EXPECT_EQ(byte_to_token_text(' '), "\xc4\xa0");  // Ġ
}

TEST(Unicode, BadUtf8BecomesReplacement) {
  const auto cps = utf8_to_cps("a\xff\xc3");
  ASSERT_EQ(cps.size(), 3u);
  EXPECT_EQ(cps[1], 0xfffdu);
  EXPECT_EQ(cps[2], 0xfffdu);
}

TEST(PreTokenize, Llama3) {
  EXPECT_EQ(pre_tokenize(PreType::Llama3, "Hello world's 12345  \n\n test!!\n"),
            (Words{"Hello", " world", "'s", " ", "123", "45", "  \n\n", " test", "!!\n"}));
  EXPECT_EQ(pre_tokenize(PreType::Llama3, "I'M  fine"), (Words{"I", "'M", " ", " fine"}));
}

TEST(PreTokenize, Gpt2AndSmollm) {
  EXPECT_EQ(pre_tokenize(PreType::Gpt2, "Hello world's 12345  \n\n test!!\n"),
            (Words{"Hello", " world", "'s", " 12345", "  \n\n", " test", "!!", "\n"}));
  EXPECT_EQ(pre_tokenize(PreType::Smollm, "ab 123c"), (Words{"ab", " ", "1", "2", "3", "c"}));
}

TEST(PreTokenize, Qwen2SplitsDigits) {
  EXPECT_EQ(pre_tokenize(PreType::Qwen2, "x 2024!"), (Words{"x", " ", "2", "0", "2", "4", "!"}));
}

TEST(PreTokenize, Default) {
  EXPECT_EQ(pre_tokenize(PreType::Default, "a+b 12345"),
            (Words{"a", "+", "b", " ", "123", "45"}));
}

TEST(PreTokenize, UnknownNameThrows) {
  EXPECT_THROW(pre_type_from_name("gemma4"), Error);
}

// 256 byte tokens, a few merges, two control tokens.
TokenizerData tiny_bpe(const std::string& pre) {
  TokenizerData d;
  d.model = "gpt2";
  d.pre = pre;
  for (int b = 0; b < 256; ++b) d.tokens.push_back(byte_to_token_text(uint8_t(b)));
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"\xc4\xa0", "w"}, {"o", "r"},
      {"\xc4\xa0w", "or"}};
  for (const auto& [a, b] : merges) {
    d.merges.push_back(a + " " + b);
    d.tokens.push_back(a + b);
  }
  d.tokens.push_back("<|begin_of_text|>");
  d.tokens.push_back("<|eot_id|>");
  d.token_types.assign(d.tokens.size(), int32_t(TokenType::Normal));
  d.token_types[d.tokens.size() - 2] = int32_t(TokenType::Control);
  d.token_types[d.tokens.size() - 1] = int32_t(TokenType::Control);
  d.bos = TokenId(d.tokens.size() - 2);
  d.eos = TokenId(d.tokens.size() - 1);
  return d;
}

TEST(Tokenizer, BpeMergesAndSpecials) {
  const Tokenizer t(tiny_bpe("llama-bpe"));
  const TokenId hello = *t.find("hello"), wor = *t.find("\xc4\xa0wor");
  EXPECT_TRUE(t.add_bos());
  EXPECT_EQ(t.tokenize("hello world", false), (std::vector<TokenId>{hello, wor, 'l', 'd'}));
  EXPECT_EQ(t.tokenize("hello", true), (std::vector<TokenId>{t.bos(), hello}));
  // Control tokens are text unless parse_special.
  const auto plain = t.tokenize("<|eot_id|>", false, false);
  EXPECT_GT(plain.size(), 1u);
  EXPECT_EQ(t.tokenize("<|eot_id|>hello", false, true), (std::vector<TokenId>{t.eos(), hello}));
  EXPECT_TRUE(t.is_eog(t.eos()));
  EXPECT_EQ(t.detokenize(t.tokenize("hello world, ok?", false)), "hello world, ok?");
  EXPECT_EQ(t.token_to_piece(t.eos(), false), "");
  EXPECT_EQ(t.token_to_piece(t.eos(), true), "<|eot_id|>");
  const std::string odd = "caf\xc3\xa9 \xe4\xb8\xad\n\t";
  EXPECT_EQ(t.detokenize(t.tokenize(odd, false)), odd);
}

TEST(Tokenizer, RejectsBadData) {
  TokenizerData d = tiny_bpe("llama-bpe");
  d.tokens.push_back("hello");
  EXPECT_THROW(Tokenizer{d}, Error);  // duplicate
  d = tiny_bpe("llama-bpe");
  d.model = "t5";
  EXPECT_THROW(Tokenizer{d}, Error);
  d = tiny_bpe("llama-bpe");
  d.bos = 100000;
  EXPECT_THROW(Tokenizer{d}, Error);
}

// <unk> <s> </s>, 256 byte tokens, then pieces with scores.
TokenizerData tiny_spm() {
  TokenizerData d;
  d.model = "llama";
  d.tokens = {"<unk>", "<s>", "</s>"};
  d.token_types = {2, 3, 3};
  d.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    d.tokens.push_back(fmt::format("<0x{:02X}>", b));
    d.token_types.push_back(6);
    d.scores.push_back(0);
  }
  const std::vector<std::string> pieces = {"\xe2\x96\x81", "h", "e", "l", "o", "w", "r", "d",
                                           "he", "ll", "\xe2\x96\x81he", "\xe2\x96\x81hell",
                                           "\xe2\x96\x81hello", "wo", "\xe2\x96\x81wo"};
  float score = -1;
  for (const auto& p : pieces) {
    d.tokens.push_back(p);
    d.token_types.push_back(1);
    d.scores.push_back(score -= 1.0f);
  }
  return d;
}

TEST(Tokenizer, SentencePiece) {
  const Tokenizer t(tiny_spm());
  EXPECT_TRUE(t.is_spm());
  EXPECT_EQ(t.bos(), 1);
  const auto ids = t.tokenize("hello wo!", true);
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], *t.find("\xe2\x96\x81hello"));
  EXPECT_EQ(ids[2], *t.find("\xe2\x96\x81wo"));
  EXPECT_EQ(ids[3], 3 + '!');  // byte fallback <0x21>
  // As llama.cpp: the leading space is stripped unless a BOS was removed.
  EXPECT_EQ(t.detokenize(ids, true), " hello wo!");
  EXPECT_EQ(t.detokenize(t.tokenize("hello wo!", false)), "hello wo!");
  EXPECT_EQ(t.detokenize(t.tokenize("h\xc3\xa9", false)), "h\xc3\xa9");
}

TEST(ChatTemplate, DetectAndApply) {
  const std::vector<ChatMessage> msgs = {{"system", "Be brief."}, {"user", "Hi"}};
  auto f = detect_chat_template("{% for m in messages %}<|im_start|>{{ m.role }}...");
  EXPECT_EQ(f.kind, ChatTemplate::ChatML);
  EXPECT_EQ(apply_chat_template(f, msgs),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  f = detect_chat_template("<|start_header_id|>' + role + '<|end_header_id|>");
  EXPECT_EQ(f.kind, ChatTemplate::Llama3);
  EXPECT_EQ(apply_chat_template(f, msgs),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  f = detect_chat_template("'[INST] ' + ... <<SYS>>");
  EXPECT_EQ(f.kind, ChatTemplate::Llama2);
  EXPECT_EQ(apply_chat_template(f, msgs), "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]");
  f = detect_chat_template("{{ '<|user|>\\n' + message['content'] + eos_token }}", "</s>");
  EXPECT_EQ(f.kind, ChatTemplate::Zephyr);
  EXPECT_EQ(apply_chat_template(f, msgs),
            "<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\n");
  EXPECT_EQ(detect_chat_template("").kind, ChatTemplate::ChatML);
}

}  // namespace
}  // namespace blockq::model
