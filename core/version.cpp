#include "core/version.h"

namespace llmft {

const char* llmft_version() {
  return LLMFT_VERSION;
}

}  // namespace llmft
