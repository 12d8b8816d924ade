// Whether a text starts or ends with another: C++17's strings lack starts_with and
// ends_with (C++20 adds them).
#pragma once

#include <string_view>

namespace llmft {

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace llmft
