// Reads the documents that `llmft prepare` tokenizes, from one of two kinds of file:
//  - JSON Lines (the path ends in ".jsonl"): every line that is not blank is one
//    document, a JSON object with either a string "text" field (plain text, all of it
//    trained on) or string "prompt" and "response" fields (instruction tuning: the
//    model reads the prompt and is trained on the response only); other fields are
//    ignored;
//  - anything else is plain text, and the whole file is one document.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace llmft::io {

// One document: `prompt` is context the model reads but is not trained to produce
// (empty for plain text), `text` is what it is trained to produce (the response of
// a prompt/response line, or all of a plain document).
struct Document {
  std::string prompt;
  std::string text;
};

// Called as reading advances with the bytes of the file consumed so far and the
// file's size; may be empty.
using ReadProgress = std::function<void(size_t bytes_done, size_t bytes_total)>;

// Returns the documents of `path` in file order. Throws llmft::Error naming the path
// when it cannot be read or holds no document or no text ("the dataset is empty"),
// naming the path, the 1-based line and the byte offset of the first byte that is not
// well-formed UTF-8 (tokenizers read text, and Python's would refuse it too), and naming
// the path and the line when a JSONL line is not one of the two forms above (not JSON,
// not an object, a field missing or not a string, or both forms).
std::vector<Document> read_documents(const std::string& path, const ReadProgress& progress);

}  // namespace llmft::io
