// Reads the documents that `llmft prepare` tokenizes, from one of two kinds of file:
//  - JSON Lines (the path ends in ".jsonl"): every line that is not blank is a JSON
//    object with a string "text" field, and each such line is one document;
//  - anything else is plain text, and the whole file is one document.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace llmft::io {

// Called as reading advances with the bytes of the file consumed so far and the
// file's size; may be empty.
using ReadProgress = std::function<void(size_t bytes_done, size_t bytes_total)>;

// Returns the documents of `path` in file order. Throws llmft::Error naming the path
// when it cannot be read or holds no text, and naming the 1-based line when a JSONL
// line is not a JSON object with a string "text" field.
std::vector<std::string> read_documents(const std::string& path, const ReadProgress& progress);

}  // namespace llmft::io
