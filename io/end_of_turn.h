// The token a chat template puts after an assistant's reply (Llama 3's "<|eot_id|>",
// ChatML's "<|im_end|>", Zephyr's and Mistral's "</s>"): where a generated reply ends,
// whatever the tokenizer's own end-of-text token is (a base model tuned on a ChatML
// template keeps "<|endoftext|>" as its eos_token).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/chat_template.h"

namespace llmft::io {

// Renders a one-turn conversation with `chat_template` and returns the added token
// (`added_tokens`: text, id, as tokenizer.json lists them) that follows the assistant's
// reply, past any whitespace; the longest when several match. Nullopt when the reply is
// followed by plain text or by nothing.
// Throws llmft::Error when the template cannot be rendered (ChatTemplate::render).
std::optional<int32_t> end_of_turn_token(
    const ChatTemplate& chat_template,
    const std::vector<std::pair<std::string, int64_t>>& added_tokens);

}  // namespace llmft::io
