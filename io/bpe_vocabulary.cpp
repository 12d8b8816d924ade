#include "io/bpe_vocabulary.h"

#include <algorithm>

#include "core/error.h"
#include "io/json.h"

namespace llmft::io {

BpeVocabulary::BpeVocabulary(const BpeFiles& files) : special(files.special) {
  int64_t largest_id = -1;
  for (const auto& entry : files.vocab) largest_id = std::max(largest_id, entry.second);
  for (const auto& entry : files.added_tokens) largest_id = std::max(largest_id, entry.second);
  const size_t token_count = files.vocab.size() + files.added_tokens.size();
  LLMFT_REQUIRE(largest_id < static_cast<int64_t>(token_count),
                files.vocab_origin << ": id " << largest_id << " is beyond the " << token_count
                                   << " tokens it lists; ids must number the tokens from 0");
  texts.resize(static_cast<size_t>(largest_id + 1));
  added.resize(texts.size());
  ids.reserve(files.vocab.size());
  for (const auto& [text, id] : files.vocab) {
    LLMFT_REQUIRE(!texts[id].has_value(),
                  files.vocab_origin << ": id " << id << " is given to more than one token");
    texts[id] = text;
    ids.emplace(text, static_cast<int32_t>(id));
  }
  for (const auto& [text, id] : files.added_tokens) {
    texts[id] = text;
    added[id] = true;
    added_tokens.add(text, static_cast<int32_t>(id));
  }
  for (size_t rank = 0; rank < files.merges.size(); ++rank) {
    const BpeFiles::MergeRule& rule = files.merges[rank];
    int32_t parts[3];
    const std::string texts_of_parts[3] = {rule.left, rule.right, rule.left + rule.right};
    for (int k = 0; k < 3; ++k) {
      const auto found = ids.find(texts_of_parts[k]);
      LLMFT_REQUIRE(found != ids.end(), files.merge_origin(rule)
                                            << ": " << (k == 2 ? "the merged symbol " : "")
                                            << Json::quote(texts_of_parts[k])
                                            << " is not in the vocabulary");
      parts[k] = found->second;
    }
    merges.add(parts[0], parts[1], parts[2], static_cast<int32_t>(rank));
  }
}

std::optional<int32_t> BpeVocabulary::id_of(const std::string& text) const {
  const auto found = ids.find(text);
  if (found == ids.end()) return std::nullopt;
  return found->second;
}

std::vector<int32_t> BpeVocabulary::with_special_tokens(std::vector<int32_t> tokens) const {
  if (special.bos.has_value()) tokens.insert(tokens.begin(), *special.bos);
  if (special.eos.has_value()) tokens.push_back(*special.eos);
  return tokens;
}

}  // namespace llmft::io
