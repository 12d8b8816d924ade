#include "checkpoint/checkpoint_info.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/error.h"
#include "io/hf_config.h"
#include "io/json.h"

namespace llmft {
namespace {

// A float as text that reads back to the same float.
std::string exact(float value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(value));
  return text;
}

int64_t integer(const io::Hdf5File& file, const std::string& name) {
  const std::string text = file.attribute(name);
  try {
    size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw Error("the checkpoint " + file.path() + " has '" + text + "' for its '" + name +
              "' attribute where a whole number belongs: the file is damaged");
}

std::string describe(const ModelConfig& c) {
  std::ostringstream out;
  out << family_name(c.family) << " (vocabulary " << c.vocab_size << ", hidden " << c.hidden << ", "
      << c.n_layer << " layers, " << c.n_head << " heads, " << c.n_kv_head << " kv heads, MLP "
      << c.intermediate << ", " << c.max_seq_len << " positions"
      << (c.tie_embeddings ? ", tied embeddings" : "") << ")";
  return out.str();
}

// FNV-1a over the bytes of a file, continuing from `hash`.
uint64_t hash_file(const std::filesystem::path& path, uint64_t hash) {
  std::ifstream in(path, std::ios::binary);
  for (std::istreambuf_iterator<char> it(in), end; it != end; ++it) {
    hash = (hash ^ static_cast<unsigned char>(*it)) * 1099511628211ull;
  }
  return hash;
}

}  // namespace

void write_info(io::Hdf5File& file, const CheckpointInfo& info) {
  file.set_attribute("format", std::to_string(info.format));
  file.set_attribute("llmft_version", info.llmft_version);
  file.set_attribute("step", std::to_string(info.step));
  file.set_attribute("updates", std::to_string(info.updates));
  file.set_attribute("loss_scale", exact(info.loss_scale));
  file.set_attribute("loss_scale_clean_steps", std::to_string(info.clean_steps));
  file.set_attribute("windows_consumed", std::to_string(info.windows_consumed));
  file.set_attribute("global_batch", std::to_string(info.global_batch));
  file.set_attribute("seed", std::to_string(info.seed));
  file.set_attribute("optimizer", info.optimizer);
  file.set_attribute("dtype", info.dtype);
  file.set_attribute("schedule", info.schedule);
  file.set_attribute("layout", info.layout);
  file.set_attribute("model_config", info.model_config);
  file.set_attribute("vocabulary", info.vocabulary);
}

CheckpointInfo read_info(const io::Hdf5File& file) {
  LLMFT_REQUIRE(file.has_attribute(kCompleteAttribute) && file.attribute(kCompleteAttribute) == "1",
                "the checkpoint " << file.path()
                                  << " is incomplete (its write was interrupted): resume from "
                                     "an earlier one");
  CheckpointInfo info;
  info.format = static_cast<int>(integer(file, "format"));
  LLMFT_REQUIRE(info.format == kCheckpointFormat,
                "the checkpoint " << file.path() << " has format " << info.format
                                  << "; this llmft reads format " << kCheckpointFormat);
  info.llmft_version = file.attribute("llmft_version");
  info.step = integer(file, "step");
  info.updates = static_cast<int>(integer(file, "updates"));
  info.loss_scale = std::stof(file.attribute("loss_scale"));
  info.clean_steps = static_cast<int>(integer(file, "loss_scale_clean_steps"));
  info.windows_consumed = integer(file, "windows_consumed");
  info.global_batch = static_cast<int>(integer(file, "global_batch"));
  info.seed = static_cast<uint64_t>(std::stoull(file.attribute("seed")));
  info.optimizer = file.attribute("optimizer");
  info.dtype = file.attribute("dtype");
  info.schedule = file.attribute("schedule");
  info.layout = file.attribute("layout");
  info.model_config = file.attribute("model_config");
  info.vocabulary = file.attribute("vocabulary");
  return info;
}

std::string vocabulary_fingerprint(int vocab_size, const std::string& init_from) {
  namespace fs = std::filesystem;
  std::string fingerprint = std::to_string(vocab_size) + " tokens";
  if (init_from.empty()) return fingerprint;
  const fs::path dir =
      fs::is_directory(init_from) ? fs::path(init_from) : fs::path(init_from).parent_path();
  uint64_t hash = 14695981039346656037ull;
  bool found = false;
  for (const char* name : {"tokenizer.json", "vocab.json", "merges.txt"}) {
    if (!fs::is_regular_file(dir / name)) continue;
    hash = hash_file(dir / name, hash);
    found = true;
  }
  if (!found) return fingerprint;
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return fingerprint + "; tokenizer " + text;
}

void check_resumable(const CheckpointInfo& info, const ResumeTarget& run, const std::string& path) {
  const ModelConfig stored =
      io::parse_hf_config(io::Json::parse(info.model_config), path + " (model_config)");
  LLMFT_REQUIRE(io::hf_config_json(stored).dump() == io::hf_config_json(run.config).dump(),
                "the checkpoint " << path << " holds another model: " << describe(stored)
                                  << ", but --model " << run.config.name << " is "
                                  << describe(run.config)
                                  << "; resume with the model it was written for");
  // Fingerprints: the sizes must agree; tokenizer hashes where both runs know one.
  const auto size_of = [](const std::string& f) { return f.substr(0, f.find(';')); };
  const bool both_hashed = info.vocabulary.find(';') != std::string::npos &&
                           run.vocabulary.find(';') != std::string::npos;
  LLMFT_REQUIRE(size_of(info.vocabulary) == size_of(run.vocabulary) &&
                    (!both_hashed || info.vocabulary == run.vocabulary),
                "the checkpoint " << path << " was trained with another vocabulary ("
                                  << info.vocabulary << ") than this run's (" << run.vocabulary
                                  << "); resume with the tokenizer and data it was written for");
  if (run.weights_only) return;
  LLMFT_REQUIRE(info.optimizer == run.optimizer,
                "the checkpoint " << path << " holds the state of --optimizer " << info.optimizer
                                  << " but this run uses --optimizer " << run.optimizer
                                  << "; resume with --optimizer " << info.optimizer
                                  << ", or pass --resume-weights-only to start " << run.optimizer
                                  << " afresh from its weights (dropping " << info.optimizer
                                  << "'s state, the step and the data position)");
  LLMFT_REQUIRE(info.dtype == run.dtype,
                "the checkpoint " << path << " was written with --dtype " << info.dtype
                                  << " but this run uses --dtype " << run.dtype
                                  << "; resume with --dtype " << info.dtype
                                  << ", or pass --resume-weights-only to start afresh from its "
                                     "weights");
  LLMFT_REQUIRE(info.seed == run.seed, "the checkpoint "
                                           << path << " was written with --seed " << info.seed
                                           << " but this run uses --seed " << run.seed
                                           << " (the data order depends on it); resume with --seed "
                                           << info.seed);
}

}  // namespace llmft
