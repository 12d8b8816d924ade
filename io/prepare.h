// The work of `llmft prepare`: tokenize a text corpus into a token file, marking which
// tokens are training targets and, for JSONL input with prompts or conversations, where
// each sample begins.
#pragma once

#include <cstddef>
#include <string>

#include "io/tokenizer.h"

namespace llmft::io {

struct PrepareStats {
  size_t documents = 0;
  size_t conversations = 0;      // documents that are conversations
  size_t bytes = 0;              // bytes of document text encoded, prompts and messages included
  size_t tokens = 0;             // tokens written, end-of-text tokens included
  size_t target_tokens = 0;      // tokens that are training targets: all but prompt tokens
  size_t samples = 0;            // samples the file marks: one per line, none for a stream
  size_t longest_sample = 0;     // tokens of the longest sample
  size_t turns_without_end = 0;  // assistant turns no end-of-turn token closes
  std::string chat_template;     // where the template came from, when one was used
};

// Where the chat template for conversations is looked up (ChatTemplate::find).
struct ChatTemplateSearch {
  std::string tokenizer_dir;  // the directory of the tokenizer's files; "" for none
  std::string explicit_file;  // --chat-template; "" for none
};

// Reads the documents of `input` (see read_documents) and writes them atomically to the
// token file `output`, encoded with `tok`:
//  - text and prompt/response documents as the model's tokenizer does (tok.bos_token()
//    first when it adds one, then the prompt and the text, each encoded on its own),
//    with tok.eot_token() after each. Prompt tokens, and the BOS before a prompt, are not
//    training targets; the text's tokens, the BOS of a document without a prompt and the
//    end-of-text token are.
//  - conversations rendered by the chat template found by `templates` (all in one call
//    to ChatTemplate::render) and encoded as the rendered text alone, no BOS or EOT
//    added (the template writes those), targets as io/conversation_targets.h says.
// Each line of a JSONL file with a prompt/response or conversation line is one sample (the
// file records where each begins); a plain text file, or a JSONL file of {"text"} lines
// only, is one continuous stream with no samples marked. When every token is a target the
// file carries no loss mask.
// Throws llmft::Error when the input has conversations and no template is found (naming
// where it looked and --chat-template), besides the errors of read_documents,
// ChatTemplate and encode_conversation.
// Reports its progress (io/progress.h) reading, then encoding, in bytes of text.
PrepareStats prepare_token_file(const std::string& input, const std::string& output,
                                const Tokenizer& tok, const ChatTemplateSearch& templates = {});

}  // namespace llmft::io
