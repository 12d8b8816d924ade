// generation_config.json read and written (io/generation_config.h).
#include "io/generation_config.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/text_file.h"

namespace llmft::io {

namespace {

int64_t token_id(const Json& value, const std::string& path, const char* key) {
  // 2^53 bounds ids that a double holds exactly (and keeps the cast below defined).
  constexpr double kLargestExact = 9007199254740992.0;
  LLMFT_REQUIRE(
      value.is_number() && value.as_number() >= 0 && value.as_number() <= kLargestExact &&
          value.as_number() == static_cast<double>(static_cast<int64_t>(value.as_number())),
      path << ": " << key << " must be a token id (a whole number >= 0), not " << value.dump()
           << "; fix or remove the key");
  return value.as_int();
}

std::optional<int64_t> optional_id(const Json& root, const std::string& path, const char* key) {
  const Json* value = root.find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  return token_id(*value, path, key);
}

}  // namespace

void GenerationConfig::add_eos(int64_t id) {
  if (std::find(eos_token_ids.begin(), eos_token_ids.end(), id) == eos_token_ids.end()) {
    eos_token_ids.push_back(id);
  }
}

GenerationConfig read_generation_config(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "generation_config.json").string();
  GenerationConfig config;
  if (!std::filesystem::exists(path)) return config;
  Json root;
  try {
    root = Json::parse(read_text_file(path, "generation config"));
  } catch (const Error& e) {
    LLMFT_FAIL(path << ": " << e.what());
  }
  LLMFT_REQUIRE(root.is_object(), path << " must hold a JSON object, not " << root.dump());
  config.bos_token_id = optional_id(root, path, "bos_token_id");
  config.pad_token_id = optional_id(root, path, "pad_token_id");
  if (const Json* eos = root.find("eos_token_id"); eos != nullptr && !eos->is_null()) {
    if (eos->is_array()) {
      for (const Json& id : eos->as_array()) config.add_eos(token_id(id, path, "eos_token_id"));
    } else {
      config.add_eos(token_id(*eos, path, "eos_token_id"));
    }
  }
  return config;
}

Json generation_config_json(const GenerationConfig& config) {
  Json json = Json::object({});
  const auto number = [](int64_t id) { return Json::number(static_cast<double>(id)); };
  if (config.bos_token_id) json.set("bos_token_id", number(*config.bos_token_id));
  if (config.eos_token_ids.size() == 1) {
    json.set("eos_token_id", number(config.eos_token_ids[0]));
  } else if (!config.eos_token_ids.empty()) {
    Json::Array ids;
    for (int64_t id : config.eos_token_ids) ids.push_back(number(id));
    json.set("eos_token_id", Json::array(std::move(ids)));
  }
  if (config.pad_token_id) json.set("pad_token_id", number(*config.pad_token_id));
  return json;
}

}  // namespace llmft::io
