#include "io/streaming_decoder.h"

#include <string_view>

namespace llmft::io {
namespace {

// True if `text` ends in the lead byte and some continuation bytes of a UTF-8 sequence
// that needs more bytes than it has.
bool ends_in_partial_character(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const auto byte = static_cast<unsigned char>(text[text.size() - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t needed = (byte & 0xE0) == 0xC0   ? 2
                          : (byte & 0xF0) == 0xE0 ? 3
                          : (byte & 0xF8) == 0xF0 ? 4
                                                  : 1;
    return needed > back;
  }
  return false;
}

bool ends_in_replacement_character(std::string_view text) {
  constexpr std::string_view kReplacement = "\uFFFD";
  return text.size() >= kReplacement.size() &&
         text.substr(text.size() - kReplacement.size()) == kReplacement;
}

}  // namespace

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context)
    : tokenizer_(tokenizer), tokens_(std::move(context)), handed_out_(tokenizer.decode(tokens_)) {}

std::string StreamingDecoder::fresh_text() {
  const std::string text = tokenizer_.decode(tokens_);
  size_t same = 0;
  while (same < text.size() && same < handed_out_.size() && text[same] == handed_out_[same]) {
    ++same;
  }
  // Back to the start of the character, if the difference is inside one.
  if (same < handed_out_.size()) {
    while (same > 0 && (static_cast<unsigned char>(text[same]) & 0xC0) == 0x80) --same;
  }
  handed_out_ = text;
  return text.substr(same);
}

std::string StreamingDecoder::push(int32_t token) {
  tokens_.push_back(token);
  const std::string text = tokenizer_.decode(tokens_);
  if (ends_in_partial_character(text) || ends_in_replacement_character(text)) return "";
  return fresh_text();
}

std::string StreamingDecoder::finish() {
  return fresh_text();
}

}  // namespace llmft::io
