// ChatTemplate: a model's chat template (a Jinja2 program, as Hugging Face models ship it)
// and the special tokens it is rendered with, rendered by the reference implementation,
// Python's Jinja2, in the environment transformers' apply_chat_template uses
// (io/chat_template.cpp says how). Immutable once found; render() may run concurrently.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmft::io {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};
using Conversation = std::vector<ChatMessage>;

class ChatTemplate {
 public:
  // The template for the tokenizer in `tokenizer_dir` (the directory holding its
  // tokenizer.json or vocab.json; "" for a tokenizer without files), looked up in order:
  //  1. `explicit_file` (--chat-template) when not empty: a Jinja2 template file;
  //  2. chat_template.jinja in tokenizer_dir;
  //  3. "chat_template" of tokenizer_dir/tokenizer_config.json: a string, or a list of
  //     {"name", "template"} objects of which the one named "default" is used.
  // The special tokens (bos_token, eos_token, unk_token, pad_token, sep_token, cls_token,
  // mask_token) come from tokenizer_config.json as strings or {"content": ...} objects.
  // Returns nullopt when none of the three holds a template. Throws llmft::Error naming
  // the file when one exists but cannot be read or is malformed.
  static std::optional<ChatTemplate> find(const std::string& tokenizer_dir,
                                          const std::string& explicit_file);

  // A template with the given text and special tokens (name -> text), for tests and
  // callers that have them in hand. `origin` names it in messages.
  ChatTemplate(std::string text, std::string origin,
               std::map<std::string, std::string> special_tokens);

  // Where the template came from ("FILE" or "FILE: chat_template"), for messages.
  const std::string& origin() const { return origin_; }
  // The template's Jinja2 source.
  const std::string& text() const { return text_; }
  // Where find() looked, for the error that says no template was found.
  static std::string describe_search(const std::string& tokenizer_dir,
                                     const std::string& explicit_file);
  const std::map<std::string, std::string>& special_tokens() const { return special_tokens_; }

  // The text of each conversation rendered as transformers' apply_chat_template(...,
  // tokenize=False) renders it, all in one Python process. Throws llmft::Error in one
  // line when Python or Jinja2 is missing, or when the template cannot be parsed or
  // rendered (a syntax error, raise_exception, an undefined construct): Jinja's message,
  // the template's line and origin(), and the conversation: names[i] when given (say
  // "data.jsonl:7"), else "conversation i+1".
  std::vector<std::string> render(const std::vector<Conversation>& conversations,
                                  bool add_generation_prompt,
                                  const std::vector<std::string>& names = {}) const;

 private:
  std::string text_;
  std::string origin_;
  std::map<std::string, std::string> special_tokens_;
};

}  // namespace llmft::io
