// ConfigObject: a JSON object of a model config read key by key, remembering every key
// that was looked up, so that the keys nothing looked up (typos, keys of other models,
// options llmft does not implement) are refused by name instead of passing unseen.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "io/json.h"

namespace llmft::io {

class ConfigObject {
 public:
  // `json` must outlive this; `source` names it in errors ("config.json", "config.json
  // rope_scaling").
  ConfigObject(const Json& json, std::string source);

  // The member named `key` (nullptr when absent or not an object); records the lookup.
  const Json* find(std::string_view key);
  const std::string& source() const { return source_; }

  // Throws llmft::Error "SOURCE: unknown key "K" (did you mean "M"?): ..." for the first
  // key that was neither looked up nor is among `ignored`, the keys the model knows but
  // does not use; `model` says for what ("a GPT2LMHeadModel"). The suggestion is the
  // nearest looked-up or ignored key, when one is near.
  void refuse_unknown_keys(const std::vector<std::string_view>& ignored,
                           const std::string& model) const;

 private:
  const Json& json_;
  std::string source_;
  std::vector<std::string> looked_up_;
};

}  // namespace llmft::io
