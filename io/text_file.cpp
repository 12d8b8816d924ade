// A whole small text file read into a string (io/text_file.h).
#include "io/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace llmft::io {

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in, "cannot read " << what << " " << path << ": " << std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  LLMFT_REQUIRE(!in.bad(), "cannot read " << what << " " << path << ": " << std::strerror(errno));
  return text.str();
}

}  // namespace llmft::io
