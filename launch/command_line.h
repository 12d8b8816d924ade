// Shared command-line handling for llmft's subcommands (Boost.Program_options):
// --help, and --config FILE in Boost's ini syntax where the command line wins.
#pragma once

#include <boost/program_options.hpp>
#include <string>

namespace llmft {

namespace po = boost::program_options;

// Parses args against `options` (plus --help and --config). Prints help to stdout and
// returns false when --help was given; throws llmft::Error on bad options.
bool parse_options(const std::vector<std::string>& args, const po::options_description& options,
                   po::variables_map& values, const std::string& usage, bool print);

}  // namespace llmft
