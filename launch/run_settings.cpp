#include "launch/run_settings.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>

#include "io/hf_config.h"
#include "io/json.h"

namespace llmft {
namespace {

constexpr std::streamoff kIdentityBytes = 64 * 1024;

template <typename T>
bool append_as(const boost::any& value, std::ostringstream& out) {
  const T* typed = boost::any_cast<T>(&value);
  if (typed) out << *typed;
  return typed != nullptr;
}

// A float or double as the shortest text that reads back to it (3e-4, not 0.000300000014).
template <typename T>
bool append_shortest(const boost::any& value, std::ostringstream& out) {
  const T* typed = boost::any_cast<T>(&value);
  if (typed == nullptr) return false;
  char text[32];
  out << std::string_view(text, std::to_chars(text, text + sizeof text, *typed).ptr - text);
  return true;
}

std::string option_text(const po::variable_value& value) {
  const boost::any& any = value.value();
  std::ostringstream out;
  if (const auto* list = boost::any_cast<std::vector<std::string>>(&any)) {
    for (const std::string& item : *list) out << item << ";";
    return out.str();
  }
  const bool known = append_as<std::string>(any, out) || append_as<int>(any, out) ||
                     append_as<int64_t>(any, out) || append_as<uint64_t>(any, out) ||
                     append_shortest<float>(any, out) || append_shortest<double>(any, out) ||
                     append_as<bool>(any, out);
  return known ? out.str() : std::string("(") + any.type().name() + ")";
}

}  // namespace

std::vector<Setting> option_settings(const po::variables_map& values) {
  std::vector<Setting> settings;
  for (const auto& [name, value] : values) settings.push_back({"--" + name, option_text(value)});
  return settings;
}

Setting model_setting(const ModelConfig& config) {
  return {"the model's config", io::hf_config_json(config).dump()};
}

Setting data_file_setting(const std::string& option, const std::string& path) {
  Setting setting{option + " file", "none"};
  if (path.empty()) return setting;
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) {
    setting.value = "unreadable";
    return setting;
  }
  std::ifstream in(path, std::ios::binary);
  const std::streamoff size_bytes = static_cast<std::streamoff>(size);
  const std::streamoff head = std::min(size_bytes, kIdentityBytes);
  const std::streamoff tail = std::min(size_bytes - head, kIdentityBytes);
  std::string bytes(static_cast<size_t>(head + tail), '\0');
  in.read(bytes.data(), head);
  in.seekg(size_bytes - tail);
  in.read(bytes.data() + head, tail);
  setting.value = std::to_string(size) + " bytes, " +
                  std::to_string(std::hash<std::string>{}(bytes)) + " first and last bytes hash";
  return setting;
}

}  // namespace llmft
