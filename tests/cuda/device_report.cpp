// On a machine with a GPU: `llmft --version`'s cuda line names the driver and every GPU
// the backend opens, and this build has code for them (none is refused).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/backend_registry.h"

namespace llmft {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("the build report names the driver and the GPU the backend runs on") {
  const std::vector<std::string> devices = describe_devices();
  REQUIRE(devices.size() == 2);
  const std::string& cuda = devices[1];
  CAPTURE(cuda);
  CHECK(cuda.rfind("cuda: CUDA runtime ", 0) == 0);
  CHECK(contains(cuda, "; driver for CUDA "));
  CHECK_FALSE(contains(cuda, "too old"));
  // The backend's own description starts "cuda:0 NAME, MEMORY, compute capability M.m".
  const std::unique_ptr<Backend> be = make_backend("cuda:0");
  const std::string described = be->describe();
  const std::string name = described.substr(7, described.find(", ") - 7);
  const size_t capability = described.find("compute capability ");
  REQUIRE(capability != std::string::npos);
  const std::string version = described.substr(capability, described.find(';') - capability);
  CHECK(contains(cuda, "; cuda:0 (" + name + ", " + version + ")"));
}

}  // namespace
}  // namespace llmft
