#include "launch/command_line.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/error.h"
#include "launch/build_report.h"

namespace llmft {

namespace {

// Parses the ini file `path`, binds its values over the defaults and runs `check` on them,
// so that a bad value there is an error even where the command line overrides it.
po::parsed_options parse_config_file(const std::string& path,
                                     const po::options_description& options,
                                     const std::function<void()>& check) {
  LLMFT_REQUIRE(
      std::filesystem::is_regular_file(path),
      "--config " << path << ": "
                  << (std::filesystem::exists(path) ? "not a regular file" : "cannot read the file")
                  << "; give an ini file (key = value, names without --)");
  std::ifstream in(path);
  LLMFT_REQUIRE(in, "--config " << path << ": cannot read the file");
  try {
    po::parsed_options parsed = po::parse_config_file(in, options);
    po::variables_map file_values;
    po::store(parsed, file_values);
    po::notify(file_values);
    if (check) check();
    return parsed;
  } catch (const po::error& e) {
    LLMFT_FAIL("--config " << path << ": " << e.what());
  } catch (const Error& e) {
    LLMFT_FAIL("--config " << path << ": " << e.what());
  }
}

}  // namespace

bool parse_options(const std::vector<std::string>& args, const po::options_description& options,
                   po::variables_map& values, const std::string& usage, bool print,
                   const std::function<void()>& check_config_values) {
  po::options_description common("General");
  common.add_options()("help,h", "print this help and exit")(
      "version",
      "print the release, the devices and communicators this build has and what "
      "each finds here (libraries, driver, GPUs), and exit")(
      "config", po::value<std::string>(),
      "read options from an ini file (key = value, names without --); the command line wins");
  po::options_description all;
  all.add(common).add(options);
  try {
    po::store(po::command_line_parser(args).options(all).run(), values);
    if (values.count("config")) {
      po::store(parse_config_file(values["config"].as<std::string>(), options, check_config_values),
                values);
    }
    if (values.count("help")) {
      if (print) std::cout << usage << "\n\n" << all << "\n";
      return false;
    }
    if (values.count("version")) {
      if (print) std::cout << build_report();
      return false;
    }
    po::notify(values);
  } catch (const po::error& e) {
    LLMFT_FAIL(e.what() << " (see llmft --help)");
  }
  return true;
}

}  // namespace llmft
