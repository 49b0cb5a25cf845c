// Chat prompt formatting for ChatML, Llama 3, Llama 2 and Zephyr templates.
#include "model/chat_template.hpp"

namespace blockq::model {

namespace {

bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

std::string trim(std::string_view s) {
  const auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  size_t b = 0, e = s.size();
  while (b < e && ws(s[b])) ++b;
  while (e > b && ws(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

ChatFormat detect_chat_template(std::string_view t, std::string_view eos_text) {
  ChatFormat f;
  if (contains(t, "<|im_start|>")) {
    f.kind = ChatTemplate::ChatML;
  } else if (contains(t, "<|start_header_id|>") && contains(t, "<|end_header_id|>")) {
    f.kind = ChatTemplate::Llama3;
  } else if (contains(t, "[INST]")) {
    f.kind = ChatTemplate::Llama2;
    f.llama2_system = contains(t, "<<SYS>>");
    f.llama2_strip = contains(t, "content.strip()");
  } else if (contains(t, "<|user|>")) {
    f.kind = ChatTemplate::Zephyr;
    f.end_of_turn = contains(t, "<|endoftext|>") ? "<|endoftext|>" : std::string(eos_text);
  }
  return f;
}

std::string_view chat_template_name(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::ChatML: return "chatml";
    case ChatTemplate::Llama3: return "llama3";
    case ChatTemplate::Llama2: return "llama2";
    case ChatTemplate::Zephyr: return "zephyr";
  }
  return "?";
}

std::string apply_chat_template(const ChatFormat& f, std::span<const ChatMessage> msgs,
                                bool add_assistant) {
  std::string s;
  switch (f.kind) {
    case ChatTemplate::ChatML:
      for (const auto& m : msgs) s += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (add_assistant) s += "<|im_start|>assistant\n";
      break;
    case ChatTemplate::Llama3:
      for (const auto& m : msgs)
        s += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      if (add_assistant) s += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    case ChatTemplate::Llama2: {
      // The BOS of the first turn comes from the tokenizer; later turns open
      // with "[INST] " after the assistant's "</s>".
      bool in_turn = true;
      s += "[INST] ";
      for (const auto& m : msgs) {
        const std::string content = f.llama2_strip ? trim(m.content) : m.content;
        if (!in_turn) {
          in_turn = true;
          s += "[INST] ";
        }
        if (m.role == "system") {
          s += f.llama2_system ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
        } else if (m.role == "user") {
          s += content + " [/INST]";
        } else {
          s += content + "</s>";
          in_turn = false;
        }
      }
      break;
    }
    case ChatTemplate::Zephyr: {
      const std::string end = f.end_of_turn.empty() ? "</s>" : f.end_of_turn;
      for (const auto& m : msgs) s += "<|" + m.role + "|>\n" + m.content + end + "\n";
      if (add_assistant) s += "<|assistant|>\n";
      break;
    }
  }
  return s;
}

}  // namespace blockq::model
