// GPT-2's pre-tokenizer, which cuts text into the pieces that BPE then merges within: the
// regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// written out by hand over UTF-8 code points, with the character classes of
// io/unicode_classes.h, so that it splits as the ByteLevel pre-tokenizer of Hugging Face
// `tokenizers` does.
// Stateless; safe to call from any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace llmft::io {

// The regex as a tokenizer.json writes it in a Split pre-tokenizer.
inline constexpr char kGpt2SplitPattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// The end of the GPT-2 pre-token that starts at text[begin]. A byte that is not valid
// UTF-8 counts as a character of class other.
// REQUIRES: begin < text.size()
size_t gpt2_pretoken_end(std::string_view text, size_t begin);

}  // namespace llmft::io
