#include "checkpoint/checkpoint_info.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/error.h"
#include "io/hf_config.h"
#include "io/json.h"
#include "io/value_digest.h"

namespace llmft {
namespace {

constexpr const char* kInfoDigestAttribute = "info_digest";
constexpr int64_t kMaxCount = int64_t{1} << 62;  // far past any real step or window count

// A float as text that reads back to the same float.
std::string exact(float value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(value));
  return text;
}

// The attributes as read, checked against their digest; each value parsed with an error
// naming the file and the attribute.
class StoredInfo {
 public:
  explicit StoredInfo(const io::Hdf5File& file) : file_(file) {}

  const std::string& text(const char* name) {
    pairs_.emplace_back(name, file_.attribute(name));
    return pairs_.back().second;
  }
  int64_t integer(const char* name, int64_t min, int64_t max) {
    const std::string& value = text(name);
    try {
      size_t used = 0;
      const long long parsed = std::stoll(value, &used);
      if (used == value.size() && parsed >= min && parsed <= max) return parsed;
    } catch (const std::exception&) {
    }
    throw Error("the checkpoint " + file_.path() + " has '" + value + "' for its '" + name +
                "' attribute where a whole number in [" + std::to_string(min) + ", " +
                std::to_string(max) + "] belongs: the file is damaged");
  }
  uint64_t unsigned_integer(const char* name) {
    const std::string& value = text(name);
    try {
      size_t used = 0;
      const unsigned long long parsed = std::stoull(value, &used);
      if (used == value.size() && !value.empty() && value[0] != '-') return parsed;
    } catch (const std::exception&) {
    }
    throw Error("the checkpoint " + file_.path() + " has '" + value + "' for its '" + name +
                "' attribute where a whole number belongs: the file is damaged");
  }
  float positive(const char* name) {
    const std::string& value = text(name);
    try {
      size_t used = 0;
      const float parsed = std::stof(value, &used);
      if (used == value.size() && std::isfinite(parsed) && parsed > 0) return parsed;
    } catch (const std::exception&) {
    }
    throw Error("the checkpoint " + file_.path() + " has '" + value + "' for its '" + name +
                "' attribute where a positive number belongs: the file is damaged");
  }
  const std::string& json(const char* name) {
    const std::string& value = text(name);
    try {
      io::Json::parse(value);
    } catch (const Error& e) {
      throw Error("the checkpoint " + file_.path() + "'s '" + name +
                  "' attribute is not valid JSON (" + e.what() + "): the file is damaged");
    }
    return value;
  }
  // After every attribute was read: refuses them when they differ from what was written.
  void verify_digest() const {
    uint64_t stored = 0;
    LLMFT_REQUIRE(io::parse_digest_text(file_.attribute(kInfoDigestAttribute), stored) &&
                      stored == io::digest_text_pairs(pairs_),
                  "the checkpoint " << file_.path()
                                    << "'s attributes differ from those written (their digest "
                                       "does not match): the file is damaged; resume from another "
                                       "checkpoint");
  }

 private:
  const io::Hdf5File& file_;
  std::vector<std::pair<std::string, std::string>> pairs_;
};

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
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"format", std::to_string(info.format)},
      {"llmft_version", info.llmft_version},
      {"step", std::to_string(info.step)},
      {"updates", std::to_string(info.updates)},
      {"loss_scale", exact(info.loss_scale)},
      {"loss_scale_clean_steps", std::to_string(info.clean_steps)},
      {"windows_consumed", std::to_string(info.windows_consumed)},
      {"global_batch", std::to_string(info.global_batch)},
      {"seed", std::to_string(info.seed)},
      {"optimizer", info.optimizer},
      {"dtype", info.dtype},
      {"schedule", info.schedule},
      {"layout", info.layout},
      {"model_config", info.model_config},
      {"vocabulary", info.vocabulary},
      {"data", info.data},
      {"seq_len", std::to_string(info.seq_len)}};
  for (const auto& [name, value] : pairs) file.set_attribute(name, value);
  file.set_attribute(kInfoDigestAttribute, io::digest_text(io::digest_text_pairs(pairs)));
}

CheckpointInfo read_info(const io::Hdf5File& file) {
  LLMFT_REQUIRE(file.has_attribute(kCompleteAttribute) && file.attribute(kCompleteAttribute) == "1",
                "the checkpoint " << file.path()
                                  << " is incomplete (its write was interrupted): resume from "
                                     "an earlier one");
  StoredInfo stored(file);
  CheckpointInfo info;
  info.format = static_cast<int>(stored.integer("format", 0, 1000));
  LLMFT_REQUIRE(info.format == kCheckpointFormat,
                "the checkpoint " << file.path() << " has format " << info.format
                                  << "; this llmft reads format " << kCheckpointFormat
                                  << " (format 1 files carry no digests to verify them): resume "
                                     "it with the llmft that wrote it, or start afresh");
  info.llmft_version = stored.text("llmft_version");
  info.step = stored.integer("step", 0, kMaxCount);
  info.updates = static_cast<int>(stored.integer("updates", 0, info.step));
  info.loss_scale = stored.positive("loss_scale");
  info.clean_steps = static_cast<int>(stored.integer("loss_scale_clean_steps", 0, info.step));
  info.windows_consumed = stored.integer("windows_consumed", 0, kMaxCount);
  info.global_batch = static_cast<int>(stored.integer("global_batch", 1, INT32_MAX));
  info.seed = stored.unsigned_integer("seed");
  info.optimizer = stored.text("optimizer");
  info.dtype = stored.text("dtype");
  info.schedule = stored.json("schedule");
  info.layout = stored.json("layout");
  info.model_config = stored.json("model_config");
  info.vocabulary = stored.text("vocabulary");
  info.data = stored.text("data");
  info.seq_len = static_cast<int>(stored.integer("seq_len", 1, INT32_MAX));
  stored.verify_digest();
  return info;
}

std::string data_fingerprint(const std::string& path) {
  constexpr std::streamoff kEdgeBytes = 1 << 20;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  LLMFT_REQUIRE(in, "cannot read " << path << " to fingerprint it");
  const std::streamoff size = in.tellg();
  const std::streamoff head = std::min(size, kEdgeBytes);
  const std::streamoff tail = std::min(size - head, kEdgeBytes);
  std::string bytes(static_cast<size_t>(head + tail), '\0');
  in.seekg(0);
  in.read(bytes.data(), head);
  in.seekg(size - tail);
  in.read(bytes.data() + head, tail);
  return std::to_string(size) + " bytes, edges " +
         io::digest_text(io::digest_text_pairs({{"edges", bytes}}));
}

ModelConfig checkpoint_model(const CheckpointInfo& info, const std::string& path) {
  ModelConfig config =
      io::parse_hf_config(io::Json::parse(info.model_config), path + " (model_config)");
  config.name = path;
  return config;
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
  if (run.new_data) return;
  LLMFT_REQUIRE(
      info.data == run.data, "the checkpoint "
                                 << path << " was trained on other data (" << info.data
                                 << ") than this run's --data (" << run.data
                                 << "), so its window count does not say where this data's "
                                    "stream stands; resume with the --data it was written for, "
                                    "or pass --resume-new-data to continue its count on this data");
  LLMFT_REQUIRE(info.seq_len == run.seq_len,
                "the checkpoint " << path << " was written with --seq-len " << info.seq_len
                                  << " but this run uses --seq-len " << run.seq_len
                                  << ": the windows differ, so its window count does not say where "
                                     "the stream stands; resume with --seq-len "
                                  << info.seq_len
                                  << ", or pass --resume-new-data to continue its "
                                     "count on the new windows");
}

}  // namespace llmft
