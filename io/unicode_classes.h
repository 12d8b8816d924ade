// Unicode for GPT-2's pre-tokenizer: reading code points out of UTF-8 text, and the
// character classes its regex uses, \p{L} (letters), \p{N} (numbers) and \s (white
// space), as the regex engine of Hugging Face `tokenizers` (Oniguruma) defines them:
// letters and numbers are the general categories L* and N* of Unicode 16.0.0 (the
// version `tokenizers` 0.23 matches against), white space is the White_Space property.
// Stateless; safe to call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace llmft::io {

enum class CharClass : uint8_t { letter, number, space, other };

// Stands for a byte that does not start a valid UTF-8 sequence.
inline constexpr char32_t kNotUtf8 = 0x110000;

struct Utf8Char {
  char32_t code_point;  // kNotUtf8 for an invalid byte
  size_t length;        // bytes it takes, 1 for an invalid byte
};

// The character that starts at text[pos]. A byte that does not start a well-formed
// UTF-8 sequence (stray continuation byte, truncated or overlong sequence, surrogate,
// beyond U+10FFFF) is one character of its own, kNotUtf8.
// REQUIRES: pos < text.size()
Utf8Char utf8_char_at(std::string_view text, size_t pos);

// The class of `code_point`; kNotUtf8, surrogates and unassigned code points are
// CharClass::other.
CharClass char_class(char32_t code_point);

}  // namespace llmft::io
