// The tokens of one conversation as a training sample, and which of them are targets:
// each assistant message's content and the end-of-turn token that closes it; the rest
// (system and user messages, role headers, BOS, a default system prompt) is context.
//
// How the targets are found, without rendering any conversation prefix:
//  1. Each message's content is looked up in the rendered text in message order, from
//     where the previous one ended: as given, else with surrounding white space trimmed
//     (templates that write `message['content'] | trim`), the first place that an added
//     token closes (after white space) winning over earlier ones (a reply "a" also occurs
//     in the header "<|im_start|>assistant" before it), else the first place. A system or
//     user content that is not found (a template that rewrites it) is passed over; an
//     assistant content must be found.
//  2. An assistant turn runs from its content's first byte through the first added token
//     (tokenizer.json's added_tokens: ChatML's <|im_end|>, Llama 3's <|eot_id|>, the
//     </s> of Zephyr and Mistral) that follows the content with nothing but white space
//     between; what comes after that token (ChatML's "\n") is context. When no added
//     token follows, the turn is its content alone (counted in turns_without_end).
//  3. A token is a target when any of its bytes lies in a turn (so a token that joins
//     text before the content with its first characters, like SentencePiece's
//     "\u2581Hello", is one); the tokenizer reports each token's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/chat_template.h"
#include "io/tokenizer.h"

namespace llmft::io {

struct ConversationSample {
  std::vector<int32_t> tokens;   // the rendered text encoded, no BOS or EOT added
  std::vector<uint8_t> targets;  // 1 for a target token, else 0; one per token
  size_t turns_without_end = 0;  // assistant turns that no added token closes
};

// `rendered` is `conversation` rendered by the template named `template_origin`; `where`
// ("FILE:LINE") names the conversation in messages.
// Throws llmft::Error naming `where`, the message and the template when an assistant
// message's content is not in the rendered text.
ConversationSample encode_conversation(const std::string& rendered,
                                       const Conversation& conversation, const Tokenizer& tok,
                                       const std::string& where,
                                       const std::string& template_origin);

}  // namespace llmft::io
