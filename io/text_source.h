// Reads the documents that `llmft prepare` tokenizes, from one of two kinds of file:
//  - JSON Lines (the path ends in ".jsonl"): every line that is not blank is one
//    document, a JSON object of one of three forms (lines of one file may mix them):
//     - a string "text" field: plain text, all of it trained on;
//     - string "prompt" and "response" fields: instruction tuning, the model reads the
//       prompt and is trained on the response only;
//     - a conversation: "messages" (or "conversations"), a non-empty array of
//       {"role": "system" | "user" | "assistant", "content": STRING} objects, or in
//       ShareGPT's spelling {"from": "system" | "human" | "gpt", "value": STRING}
//       (human is the user, gpt the assistant), with at least one assistant message and
//       no assistant message that is empty or white space;
//    other fields are ignored;
//  - anything else is plain text, and the whole file is one document.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "io/chat_template.h"

namespace llmft::io {

// One document: `prompt` is context the model reads but is not trained to produce
// (empty for plain text), `text` is what it is trained to produce (the response of
// a prompt/response line, or all of a plain document); a conversation has its messages
// in `conversation` instead (and empty prompt and text).
struct Document {
  std::string prompt;
  std::string text;
  Conversation conversation;
  size_t line = 0;  // the JSONL line it was read from (1-based; 0 for a plain text file)

  bool is_conversation() const { return !conversation.empty(); }
};

// Called as reading advances with the bytes of the file consumed so far and the
// file's size; may be empty.
using ReadProgress = std::function<void(size_t bytes_done, size_t bytes_total)>;

// Returns the documents of `path` in file order. Throws llmft::Error naming the path
// when it cannot be read or holds no document or no text ("the dataset is empty"),
// naming the path, the 1-based line and the byte offset of the first byte that is not
// well-formed UTF-8 (tokenizers read text, and Python's would refuse it too), and naming
// the path and the line when a JSONL line is not one of the forms above (not JSON, not an
// object, a field missing or not a string, two forms, a message that is not one of the
// two spellings or has another role, a conversation without an assistant message).
std::vector<Document> read_documents(const std::string& path, const ReadProgress& progress);

}  // namespace llmft::io
