#include "core/error.h"

namespace llmft {

std::string describe_call_failure(const std::string& what, const char* expr, const char* file,
                                  int line) {
  std::ostringstream os;
  os << what << " (" << expr << " at " << file << ":" << line << ")";
  return os.str();
}

}  // namespace llmft
