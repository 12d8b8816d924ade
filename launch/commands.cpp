// The table of llmft's subcommands and how the first word of a command line picks one.
#include "launch/commands.h"

#include <string_view>

#include "core/error.h"
#include "io/nearest_name.h"

namespace llmft {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"train", run_train},     {"eval", run_eval}, {"generate", run_generate},
      {"prepare", run_prepare}, {"plan", run_plan}, {"export", run_export},
      {"plot", run_plot},
  };
  return table;
}

std::string command_hint(const std::string& word) {
  std::vector<std::string_view> names;
  std::string all;
  for (const Command& c : commands()) {
    names.emplace_back(c.name);
    all += std::string(all.empty() ? "" : ", ") + c.name;
  }
  std::optional<std::string> near = io::nearest_name(word, names);
  // A longer or shorter form of a name ("evaluate", "gen") is a slip too; suggested only.
  for (size_t i = 0; !near && i < names.size(); ++i) {
    const std::string_view name = names[i];
    const bool prefix = word.size() >= 3 && (word.rfind(name, 0) == 0 || name.rfind(word, 0) == 0);
    if (prefix) near = std::string(name);
  }
  if (near) return "; did you mean '" + *near + "'?";
  return "; the commands are " + all + " (llmft COMMAND --help)";
}

std::pair<const Command*, Args> select_command(const Args& args) {
  const Command* train = &commands().front();
  if (args.empty() || args[0].rfind("-", 0) == 0) return {train, args};
  for (const Command& c : commands()) {
    if (args[0] == c.name) return {&c, Args(args.begin() + 1, args.end())};
  }
  LLMFT_FAIL("unknown command '" << args[0] << "'" << command_hint(args[0]));
}

}  // namespace llmft
