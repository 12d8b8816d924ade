// Llama 3's pre-tokenizer, which cuts text into the pieces that byte-level BPE then merges
// within: the Split regex of Llama 3's tokenizer.json
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// (one line in the file) written out by hand over UTF-8 code points, with the character
// classes of io/unicode_classes.h, so that it splits as Hugging Face `tokenizers` does.
// The contractions match ASCII letters of either case ("DON'T" -> "DON", "'T").
// Stateless; safe to call from any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace llmft::io {

// The regex as Llama 3's tokenizer.json writes it in its Split pre-tokenizer.
inline constexpr char kLlama3SplitPattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// The end of the Llama 3 pre-token that starts at text[begin]. A byte that is not valid
// UTF-8 counts as a character of class other.
// REQUIRES: begin < text.size()
size_t llama3_pretoken_end(std::string_view text, size_t begin);

}  // namespace llmft::io
