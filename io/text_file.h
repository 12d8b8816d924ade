// A whole small text file (a JSON config, a chat template) read into a string.
#pragma once

#include <string>

namespace llmft::io {

// Throws llmft::Error "cannot read WHAT PATH: ..." naming the reason.
std::string read_text_file(const std::string& path, const std::string& what);

}  // namespace llmft::io
