#include "launch/command_line.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "io/progress.h"
#include "launch/build_report.h"
#include "launch/commands.h"
#include "launch/run_record.h"

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
                  << "; give an ini file (key = value, names without --) or a run_record.json");
  std::ifstream file(path);
  LLMFT_REQUIRE(file, "--config " << path << ": cannot read the file");
  std::ostringstream text;
  text << file.rdbuf();
  try {
    std::istringstream in(is_run_record_text(text.str()) ? run_record_config(text.str())
                                                         : text.str());
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

bool is_negative_number(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  char* end = nullptr;
  std::strtod(word.c_str(), &end);
  return end == word.c_str() + word.size();
}

// Boost reads a word that starts with '-' as the next option unless the option before it
// must have a value, so "--activation-checkpointing -3" (whose value is optional) made the
// number an unknown option "-3". An option that takes a value and a negative number after
// it are joined as "--activation-checkpointing=-3", which reaches the option's own check.
std::vector<std::string> join_negative_values(const std::vector<std::string>& args,
                                              const po::options_description& options) {
  std::vector<std::string> joined;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    const po::option_description* option =
        word.size() > 2 && word.compare(0, 2, "--") == 0 && word.find('=') == std::string::npos
            ? options.find_nothrow(word.substr(2), false)
            : nullptr;
    if (option != nullptr && option->semantic()->max_tokens() > 0 && i + 1 < args.size() &&
        is_negative_number(args[i + 1])) {
      joined.push_back(word + "=" + args[++i]);
    } else {
      joined.push_back(word);
    }
  }
  return joined;
}

// Boost guesses an option from a unique prefix unless told not to ("--check" was
// --checkpoint-dir, "--checkpoint" an ambiguous guess): every option is spelt out.
constexpr int kCommandStyle = boost::program_options::command_line_style::default_style &
                              ~boost::program_options::command_line_style::allow_guessing;

// Boost drops words that are no option's value when there are no positional options, so
// `llmft train evaluate` trained; every word is an option or its value.
void require_no_stray_words(const po::parsed_options& parsed) {
  for (const po::option& option : parsed.options) {
    if (!option.string_key.empty()) continue;
    const std::string word = option.original_tokens.empty() ? "" : option.original_tokens[0];
    LLMFT_FAIL("stray word '" << word
                              << "' in the command line: the command comes first and every "
                                 "other word is an --option or its value"
                              << command_hint(word));
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
      "read options from an ini file (key = value, names without --) or a run_record.json "
      "(the options its run was given); the command line wins")(
      "quiet", po::bool_switch(),
      "no progress lines for long operations (reading data, loading weights, checkpoints, "
      "calibration, export); step lines and summaries stay")(
      "progress-every", po::value<double>()->default_value(10, "10"),
      "seconds between progress lines when stderr is a file or pipe (a batch log); 0: one "
      "per new percentage. On a terminal one line updates in place");
  po::options_description all;
  all.add(common).add(options);
  try {
    const po::parsed_options parsed = po::command_line_parser(join_negative_values(args, all))
                                          .options(all)
                                          .style(kCommandStyle)
                                          .run();
    require_no_stray_words(parsed);
    po::store(parsed, values);
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
    const double progress_every = values["progress-every"].as<double>();
    LLMFT_REQUIRE(progress_every >= 0 && std::isfinite(progress_every),
                  "--progress-every must be 0 or more seconds, got " << progress_every);
    io::set_progress_settings(
        io::progress_settings_for(values["quiet"].as<bool>(), print, progress_every));
  } catch (const po::error& e) {
    LLMFT_FAIL(e.what() << " (see llmft --help)");
  }
  return true;
}

}  // namespace llmft
