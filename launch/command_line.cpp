#include "launch/command_line.h"

#include <fstream>
#include <iostream>

#include "core/error.h"

namespace llmft {

bool parse_options(const std::vector<std::string>& args, const po::options_description& options,
                   po::variables_map& values, const std::string& usage, bool print) {
  po::options_description common("General");
  common.add_options()("help,h", "print this help and exit")(
      "config", po::value<std::string>(),
      "read options from an ini file (key = value, names without --); the command line wins");
  po::options_description all;
  all.add(common).add(options);
  try {
    po::store(po::command_line_parser(args).options(all).run(), values);
    if (values.count("config")) {
      const std::string path = values["config"].as<std::string>();
      std::ifstream in(path);
      LLMFT_REQUIRE(in, "--config " << path << ": cannot read the file");
      po::store(po::parse_config_file(in, options), values);
    }
    if (values.count("help")) {
      if (print) std::cout << usage << "\n\n" << all << "\n";
      return false;
    }
    po::notify(values);
  } catch (const po::error& e) {
    LLMFT_FAIL(e.what() << " (see llmft --help)");
  }
  return true;
}

}  // namespace llmft
