// The special tokens a Hugging Face tokenizer puts around each text and the one that ends
// a document, as the model's tokenizer decides them: tokenizer.json's post_processor (a
// TemplateProcessing such as Llama 2's "<s> $A" or Llama 3's "<|begin_of_text|> $A", on
// its own or in a Sequence with ByteLevel), overridden by tokenizer_config.json beside it
// where that sets add_bos_token / add_eos_token (as transformers' Llama tokenizer does),
// with its bos_token / eos_token naming the tokens.
// Stateless; safe to call from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "io/json.h"

namespace llmft::io {

struct SpecialTokens {
  std::optional<int32_t> bos;  // put before each text, when the tokenizer adds it
  std::optional<int32_t> eos;  // put after each text, when the tokenizer adds it
  // Ends each document: tokenizer_config.json's eos_token, else the token the template
  // puts after the text, else the first of "<|endoftext|>", "</s>", "<|end_of_text|>"
  // that the tokenizer has.
  int32_t end_of_document = -1;
};

// The id of the token whose text is `text`, or nullopt.
using TokenIdLookup = std::function<std::optional<int32_t>(const std::string& text)>;

// Reads the special tokens of the tokenizer.json `root` at `path` (and of
// tokenizer_config.json in its directory, if there is one). `post_processor_template` is
// root's TemplateProcessing, or nullptr when it has none.
// Throws llmft::Error naming the file and the component for a template other than
// "[SPECIAL] $A [SPECIAL]", a token they name that the tokenizer lacks, and a tokenizer
// without an end-of-document token.
SpecialTokens read_special_tokens(const Json* post_processor_template, const std::string& path,
                                  const TokenIdLookup& token_id);

// Special tokens of a tokenizer without tokenizer.json (GPT-2's vocab.json): none added,
// "<|endoftext|>" ends documents. Throws llmft::Error naming `origin` if it is missing.
SpecialTokens gpt2_special_tokens(const std::string& origin, const TokenIdLookup& token_id);

}  // namespace llmft::io
