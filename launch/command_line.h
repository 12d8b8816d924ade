// Shared command-line handling for llmft's subcommands (Boost.Program_options):
// --help, --version (launch/build_report.h), and --config FILE in Boost's ini syntax (or a
// run_record.json, whose given options it reads: launch/run_record.h) where the command
// line wins. Options are spelt out (no prefix is guessed) and a word that is
// no option's value is an error.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <vector>

namespace llmft {

namespace po = boost::program_options;

// Parses args against `options` (plus --help, --version and --config). Prints the help or
// the build report to stdout (when `print`) and returns false when --help or --version
// was given; throws llmft::Error on bad options.
// A --config file is checked whole even where the command line overrides its values: each
// value must parse as its option's type, and `check_config_values`, when given, runs with
// the options bound to the file's values over the defaults (its errors name the file);
// then the effective values (command line over file over defaults) are bound.
bool parse_options(const std::vector<std::string>& args, const po::options_description& options,
                   po::variables_map& values, const std::string& usage, bool print,
                   const std::function<void()>& check_config_values = {});

}  // namespace llmft
