// `llmft --version`'s report: the release first, then one line per device and per
// communicator the registries say this build has, in their order, each with what it runs
// on here.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator_registry.h"
#include "core/backend_registry.h"
#include "core/cpu/blas_kernel.h"
#include "core/text_affixes.h"
#include "core/version.h"
#include "launch/build_report.h"
#include "launch/command_line.h"

using namespace llmft;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The section `title` of the report: its indented lines, without the indent.
std::vector<std::string> section(const std::vector<std::string>& report, const std::string& title) {
  std::vector<std::string> lines;
  size_t i = 0;
  while (i < report.size() && report[i] != title + ":") ++i;
  for (++i; i < report.size() && starts_with(report[i], "  "); ++i) {
    lines.push_back(report[i].substr(2));
  }
  return lines;
}

}  // namespace

TEST_CASE("build report: the release, then every device and communicator this build has") {
  const std::vector<std::string> report = lines_of(build_report());
  REQUIRE(!report.empty());
  CHECK(report[0] == "llmft " + std::string(llmft_version()));

  // Each kind the registries name has its line, in their order: the name, then more.
  const std::vector<std::string> devices = section(report, "devices");
  const std::vector<std::string> communicators = section(report, "communicators");
  for (const auto& [lines, names] : {std::pair{devices, available_devices()},
                                     std::pair{communicators, available_communicators()}}) {
    REQUIRE(lines.size() == names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      CAPTURE(lines[i]);
      CHECK(starts_with(lines[i], names[i] + ": "));
      CHECK(lines[i].size() > names[i].size() + 2);
    }
  }
  // A device this machine cannot run says why, in the words --device would use.
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string unavailable = device_unavailable_reason(available_devices()[i]);
    CAPTURE(devices[i]);
    CHECK(devices[i].size() > unavailable.size());
    CHECK(devices[i].substr(devices[i].size() - unavailable.size()) == unavailable);
  }
  // The CPU runs on the BLAS library and kernel the training log names.
  const cpu::BlasReport& blas = cpu::select_blas_kernel();
  CHECK(devices[0] == "cpu: " + cpu::blas_description());
  CHECK(devices[0].find(blas.library) != std::string::npos);
  CHECK(devices[0].find("; kernel " + blas.kernel + " (") != std::string::npos);
  CHECK(communicators[0].find(", MPI ") != std::string::npos);  // the standard it implements
}

TEST_CASE("build report: --version stops every subcommand's parsing, as --help does") {
  po::options_description none;
  po::variables_map values;
  CHECK_FALSE(parse_options({"--version"}, none, values, "", false));
  po::variables_map with_others;
  po::options_description steps;
  int n = 0;
  steps.add_options()("steps", po::value(&n)->required(), "");
  // A required option missing is no error when the report is all that was asked for.
  CHECK_FALSE(parse_options({"--version"}, steps, with_others, "", false));
}
