// generation_config.json, the file of a Hugging Face model directory that tells generate()
// and pipeline("text-generation") which tokens begin and end a text and which one pads:
// bos_token_id, eos_token_id (one id or a list: the end-of-text and the chat template's
// end-of-turn tokens, any of which ends a reply) and pad_token_id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/json.h"

namespace llmft::io {

struct GenerationConfig {
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // any of them ends generation
  std::optional<int64_t> pad_token_id;

  // Adds `id` to eos_token_ids unless it is there already.
  void add_eos(int64_t id);
};

// The generation_config.json of `dir`; an empty config when the directory has none.
// Throws llmft::Error naming the file and the key when bos/eos/pad ids are not token ids
// (eos_token_id: an id or a list of ids; null means none).
GenerationConfig read_generation_config(const std::string& dir);

// The file's JSON: eos_token_id a number when there is one, else a list; keys without a
// value are left out.
Json generation_config_json(const GenerationConfig& config);

}  // namespace llmft::io
