#include "io/config_object.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/error.h"
#include "io/nearest_name.h"

namespace llmft::io {

ConfigObject::ConfigObject(const Json& json, std::string source)
    : json_(json), source_(std::move(source)) {}

const Json* ConfigObject::find(std::string_view key) {
  if (std::find(looked_up_.begin(), looked_up_.end(), key) == looked_up_.end()) {
    looked_up_.emplace_back(key);
  }
  return json_.find(key);
}

void ConfigObject::refuse_unknown_keys(const std::vector<std::string_view>& ignored,
                                       const std::string& model) const {
  if (!json_.is_object()) return;
  std::vector<std::string_view> known(ignored);
  known.insert(known.end(), looked_up_.begin(), looked_up_.end());
  for (const auto& [key, value] : json_.as_object()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::optional<std::string> near = nearest_name(key, known);
    LLMFT_FAIL(source_ << ": unknown key " << Json::quote(key)
                       << (near ? " (did you mean " + Json::quote(*near) + "?)" : "")
                       << ": not a key that llmft reads for " << model
                       << " or knows transformers to ignore there; correct or remove it");
  }
}

}  // namespace llmft::io
