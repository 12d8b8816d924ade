// main() of the GPU test programs: where this machine cannot run the CUDA backend (a build
// without it, no driver, no device) they report themselves skipped, with the reason, by
// ctest's SKIP_RETURN_CODE; otherwise doctest runs them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "core/backend_registry.h"

int main(int argc, char** argv) {
  constexpr int kSkipped = 77;
  const std::string reason = llmft::device_unavailable_reason("cuda");
  if (!reason.empty()) {
    std::printf("skipped: %s\n", reason.c_str());
    return kSkipped;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
