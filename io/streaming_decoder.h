// StreamingDecoder: the text of tokens that arrive one at a time (`llmft generate`), as
// the tokenizer decodes the whole sequence, handed out as soon as it is final. Decoding
// token by token would go wrong where a decoder looks at neighbours (SentencePiece drops
// the first token's leading space, joins "<0xNN>" byte tokens into characters) or where a
// character's UTF-8 bytes span tokens; so this decodes the context and the new tokens
// together and holds back text that ends in an incomplete UTF-8 sequence or in U+FFFD
// (what `tokenizers` shows for bytes that do not form a character yet). Where new tokens
// change text already handed out (byte tokens that form no character after all turn the
// whole run into U+FFFD), the text is handed out again from the first changed character,
// so what is printed is always whole UTF-8 characters.
// Not thread-safe; one per stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/tokenizer.h"

namespace llmft::io {

class StreamingDecoder {
 public:
  // `context`: the tokens before the stream (the prompt's), whose text is not handed out.
  StreamingDecoder(const Tokenizer& tokenizer, std::vector<int32_t> context);

  // Adds `token`; returns the text that is now final and was not returned before.
  std::string push(int32_t token);
  // The text held back so far, at the end of the stream.
  std::string finish();

 private:
  const Tokenizer& tokenizer_;
  // The text of tokens_ from the first character that differs from handed_out_.
  std::string fresh_text();

  std::vector<int32_t> tokens_;
  std::string handed_out_;  // the decoded text returned so far, after the context's
};

}  // namespace llmft::io
