#include "io/gpt2_pretokenizer.h"

#include "io/unicode_classes.h"

namespace llmft::io {
namespace {

// The length of the contraction 's 't 're 've 'm 'll or 'd at text[pos], or 0.
size_t contraction_length(std::string_view text, size_t pos) {
  if (text[pos] != '\'' || pos + 1 >= text.size()) return 0;
  const char first = text[pos + 1];
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  if (pos + 2 >= text.size()) return 0;
  const std::string_view two = text.substr(pos + 1, 2);
  return two == "re" || two == "ve" || two == "ll" ? 3 : 0;
}

// The end of the run of characters of class `run_class` that starts at text[pos].
size_t end_of_run(std::string_view text, size_t pos, CharClass run_class) {
  while (pos < text.size()) {
    const Utf8Char c = utf8_char_at(text, pos);
    if (char_class(c.code_point) != run_class) break;
    pos += c.length;
  }
  return pos;
}

}  // namespace

size_t gpt2_pretoken_end(std::string_view text, size_t begin) {
  if (const size_t length = contraction_length(text, begin)) return begin + length;
  // " ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+": an optional space, then a run of one class.
  const size_t head = text[begin] == ' ' && begin + 1 < text.size() ? begin + 1 : begin;
  const Utf8Char head_char = utf8_char_at(text, head);
  const CharClass head_class = char_class(head_char.code_point);
  if (head_class != CharClass::space) return end_of_run(text, head + head_char.length, head_class);
  // "\s+(?!\S)|\s+": white space up to the end of the text, or else up to its last
  // character, which then starts the next pre-token (" word", say), unless it is alone.
  size_t last = begin;
  size_t end = begin;
  while (end < text.size()) {
    const Utf8Char c = utf8_char_at(text, end);
    if (char_class(c.code_point) != CharClass::space) break;
    last = end;
    end += c.length;
  }
  return end == text.size() || last == begin ? end : last;
}

}  // namespace llmft::io
