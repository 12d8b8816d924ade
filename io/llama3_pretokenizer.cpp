#include "io/llama3_pretokenizer.h"

#include "io/unicode_classes.h"

namespace llmft::io {
namespace {

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// The length of the contraction 's 't 're 've 'm 'll or 'd, in either case, at
// text[pos], or 0.
size_t contraction_length(std::string_view text, size_t pos) {
  if (text[pos] != '\'' || pos + 1 >= text.size()) return 0;
  const char first = ascii_lower(text[pos + 1]);
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  if (pos + 2 >= text.size()) return 0;
  const char second = ascii_lower(text[pos + 2]);
  const bool two = (first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
                   (first == 'l' && second == 'l');
  return two ? 3 : 0;
}

bool is_line_break(char32_t c) {
  return c == '\r' || c == '\n';
}

CharClass class_at(std::string_view text, size_t pos) {
  return char_class(utf8_char_at(text, pos).code_point);
}

// The end of the run of characters of class `run_class` that starts at text[pos], at most
// `limit` characters long.
size_t end_of_run(std::string_view text, size_t pos, CharClass run_class,
                  size_t limit = std::string_view::npos) {
  for (size_t count = 0; pos < text.size() && count < limit; ++count) {
    const Utf8Char c = utf8_char_at(text, pos);
    if (char_class(c.code_point) != run_class) break;
    pos += c.length;
  }
  return pos;
}

// The end of the run of '\r' and '\n' that starts at text[pos].
size_t end_of_line_breaks(std::string_view text, size_t pos) {
  while (pos < text.size() && is_line_break(static_cast<unsigned char>(text[pos]))) ++pos;
  return pos;
}

}  // namespace

size_t llama3_pretoken_end(std::string_view text, size_t begin) {
  if (const size_t length = contraction_length(text, begin)) return begin + length;
  const Utf8Char first = utf8_char_at(text, begin);
  const CharClass first_class = char_class(first.code_point);
  const size_t second = begin + first.length;
  // "[^\r\n\p{L}\p{N}]?\p{L}+": letters, after at most one character that is neither a
  // line break, a letter nor a number.
  if (first_class == CharClass::letter) return end_of_run(text, second, CharClass::letter);
  const bool may_lead_letters =
      first_class != CharClass::number && !is_line_break(first.code_point);
  if (may_lead_letters && second < text.size() && class_at(text, second) == CharClass::letter) {
    return end_of_run(text, second, CharClass::letter);
  }
  // "\p{N}{1,3}"
  if (first_class == CharClass::number) return end_of_run(text, begin, CharClass::number, 3);
  // " ?[^\s\p{L}\p{N}]+[\r\n]*": punctuation, after at most one space, then line breaks.
  const size_t head = first.code_point == ' ' && second < text.size() ? second : begin;
  if (class_at(text, head) == CharClass::other) {
    return end_of_line_breaks(text, end_of_run(text, head, CharClass::other));
  }
  // White space from here on: [begin, end), its last character starting at `last`.
  size_t end = begin, last = begin, after_last_break = begin;
  while (end < text.size()) {
    const Utf8Char c = utf8_char_at(text, end);
    if (char_class(c.code_point) != CharClass::space) break;
    last = end;
    end += c.length;
    if (is_line_break(c.code_point)) after_last_break = end;
  }
  // "\s*[\r\n]+": white space up to its last line break.
  if (after_last_break > begin) return after_last_break;
  // "\s+(?!\S)|\s+": white space up to the end of the text, or else up to its last
  // character, which then starts the next pre-token (" word", say), unless it is alone.
  return end == text.size() || last == begin ? end : last;
}

}  // namespace llmft::io
