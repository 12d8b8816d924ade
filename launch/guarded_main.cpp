#include "launch/guarded_main.h"

#include <cstdio>
#include <exception>

namespace llmft {

int guarded_main(const char* program, int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 1;
  }
}

}  // namespace llmft
