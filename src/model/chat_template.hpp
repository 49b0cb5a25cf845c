// Chat prompt formatting for the common templates, picked from a GGUF's
// tokenizer.chat_template (Jinja text) by recognising marker strings, as
// llama.cpp's llama_chat_apply_template does; no Jinja is evaluated.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace blockq::model {

enum class ChatTemplate {
  ChatML,   // <|im_start|>role\ncontent<|im_end|>\n  (Qwen2, SmolLM2); the fallback
  Llama3,   // <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
  Llama2,   // [INST] <<SYS>>\nsys\n<</SYS>>\n\nuser [/INST]assistant</s>
  Zephyr,   // <|role|>\ncontent</s>\n  (TinyLlama; <|endoftext|> when the template uses it)
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

struct ChatFormat {
  ChatTemplate kind = ChatTemplate::ChatML;
  bool llama2_system = true;   // Llama2: wrap the system message in <<SYS>>
  bool llama2_strip = false;   // Llama2: strip message whitespace (template uses content.strip())
  std::string end_of_turn;     // Zephyr: "</s>" or "<|endoftext|>"
};

// Recognises the template by its markers: <|im_start|> → ChatML,
// <|start_header_id|> → Llama3, [INST] → Llama2, <|user|> → Zephyr; an empty
// or unrecognised template gives ChatML. eos_text is the EOS token's text
// (the Zephyr turn end when the template writes eos_token).
ChatFormat detect_chat_template(std::string_view jinja, std::string_view eos_text = "</s>");
std::string_view chat_template_name(ChatTemplate t);

// The prompt text (special tokens as text: tokenize it with parse_special).
// add_assistant appends the header that opens the assistant's turn.
std::string apply_chat_template(const ChatFormat& format, std::span<const ChatMessage> messages,
                                bool add_assistant = true);

}  // namespace blockq::model
