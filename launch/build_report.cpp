#include "launch/build_report.h"

#include <vector>

#include "comm/communicator_registry.h"
#include "core/backend_registry.h"
#include "core/version.h"

namespace llmft {
namespace {

std::string section(const std::string& title, const std::vector<std::string>& lines) {
  std::string text = title + ":\n";
  for (const std::string& line : lines) text += "  " + line + "\n";
  return text;
}

}  // namespace

std::string build_report() {
  return "llmft " + std::string(llmft_version()) + "\n" + section("devices", describe_devices()) +
         section("communicators", describe_communicators());
}

}  // namespace llmft
