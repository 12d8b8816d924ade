// The work of `llmft prepare`: tokenize a text corpus into a token file, marking which
// tokens are training targets.
#pragma once

#include <cstddef>
#include <string>

#include "io/tokenizer.h"

namespace llmft::io {

struct PrepareStats {
  size_t documents = 0;
  size_t bytes = 0;          // bytes of document text encoded, prompts included
  size_t tokens = 0;         // tokens written, end-of-text tokens included
  size_t target_tokens = 0;  // tokens that are training targets: all but prompt tokens
};

// Reads the documents of `input` (see read_documents), encodes each with `tok` as the
// model's tokenizer does (tok.bos_token() first when it adds one, then the prompt and the
// text, each encoded on its own), appends tok.eot_token() after every document (so it
// also separates them), and writes the result atomically to the token file `output`.
// Prompt tokens, and the BOS before a prompt, are not training targets; the text's tokens,
// the BOS of a document without a prompt and the end-of-text token that closes each
// document are. When every token is a target (no document has a prompt) the file carries
// no loss mask.
// With show_progress (pass isatty(fileno(stderr))), keeps one updating line on stderr,
// "prepare: reading 45% (123456/274000 bytes)" then "prepare: encoding ...", and ends
// it with a newline.
PrepareStats prepare_token_file(const std::string& input, const std::string& output,
                                const Tokenizer& tok, bool show_progress);

}  // namespace llmft::io
