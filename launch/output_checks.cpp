#include "launch/output_checks.h"

#include <filesystem>
#include <string_view>
#include <system_error>

#include "core/error.h"
#include "core/text_affixes.h"
#include "io/atomic_file.h"

namespace llmft {

namespace {

namespace fs = std::filesystem;

// `path` itself when it is a directory, the directory holding it when it is another
// existing file, and "" when nothing is there (a model preset's name).
std::string directory_of(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !fs::exists(path, ec)) return "";
  if (fs::is_directory(path, ec)) return path;
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// --model as a path: the config.json it reads (itself, or the one in its directory).
std::vector<io::NamedInput> model_inputs(const std::string& model) {
  std::error_code ec;
  if (fs::is_directory(model, ec)) return {{"--model", (fs::path(model) / "config.json").string()}};
  if (fs::exists(model, ec)) return {{"--model", model}};
  return {};
}

// --init-from's weights: the file it names, and where it names a directory or an index,
// every .safetensors and index file of that directory.
std::vector<io::NamedInput> init_from_inputs(const std::string& init_from) {
  std::vector<io::NamedInput> inputs;
  if (init_from.empty()) return inputs;
  inputs.push_back({"--init-from", init_from});
  std::error_code ec;
  if (!fs::is_directory(init_from, ec) && !ends_with(init_from, ".index.json")) return inputs;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory_of(init_from), ec)) {
    const std::string name = entry.path().filename().string();
    if (ends_with(name, ".safetensors") || ends_with(name, ".index.json")) {
      inputs.push_back({"--init-from", entry.path().string()});
    }
  }
  return inputs;
}

std::vector<io::NamedInput> train_inputs(const TrainOptions& o, const po::variables_map& values) {
  std::vector<io::NamedInput> inputs = {{"--data", o.data}, {"--val-data", o.val_data}};
  if (values.count("config")) inputs.push_back({"--config", values["config"].as<std::string>()});
  if (o.resume != "latest") inputs.push_back({"--resume", o.resume});
  for (const io::NamedInput& input : model_inputs(o.model)) inputs.push_back(input);
  for (const io::NamedInput& input : init_from_inputs(o.init_from)) inputs.push_back(input);
  return inputs;
}

// --save-dir writes config.json and the weight files, replacing those there and removing
// weight files it did not write.
void check_save_dir(const TrainOptions& o) {
  if (o.save_dir.empty()) return;
  for (const io::NamedInput& read :
       {io::NamedInput{"--model", o.model}, io::NamedInput{"--init-from", o.init_from}}) {
    const std::string dir = directory_of(read.path);
    LLMFT_REQUIRE(dir.empty() || !io::same_file(o.save_dir, dir),
                  "--save-dir " << o.save_dir << " is the directory " << read.option << " "
                                << read.path
                                << " is read from; saving there would replace the files this job "
                                   "reads: give --save-dir another directory");
  }
  LLMFT_REQUIRE(o.checkpoint_dir.empty() || !io::same_file(o.save_dir, o.checkpoint_dir),
                "--save-dir " << o.save_dir << " is also --checkpoint-dir " << o.checkpoint_dir
                              << ": give the saved model and the checkpoints a directory each");
}

}  // namespace

void check_replaced_output(const std::string& path, const std::string& option,
                           const std::vector<io::NamedInput>& inputs) {
  io::check_output_path(path, option, inputs);
  if (!path.empty()) io::check_replaceable(path, option);
}

std::vector<io::NamedInput> tokenizer_inputs(const std::string& spec, const std::string& option) {
  const std::string prefix = "bpe:";
  const std::string path = spec.rfind(prefix, 0) == 0 ? spec.substr(prefix.size()) : spec;
  const std::string dir = directory_of(path);
  if (dir.empty()) return {};
  std::vector<io::NamedInput> inputs = {{option, path}};
  for (const char* name : {"tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"}) {
    const fs::path file = fs::path(dir) / name;
    std::error_code ec;
    if (fs::exists(file, ec)) inputs.push_back({option, file.string()});
  }
  return inputs;
}

void check_train_outputs(const TrainOptions& o, const po::variables_map& values) {
  const std::vector<io::NamedInput> inputs = train_inputs(o, values);
  io::check_output_path(o.metrics, "--metrics", inputs);
  check_replaced_output(o.plan_json, "--plan-json", inputs);
  check_save_dir(o);
}

}  // namespace llmft
