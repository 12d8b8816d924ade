#include "io/hf_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/error.h"
#include "core/host_convert.h"
#include "core/text_affixes.h"
#include "io/atomic_file.h"
#include "io/hf_config.h"
#include "io/json.h"
#include "io/output_directory.h"

namespace llmft::io {

namespace {

namespace fs = std::filesystem;

constexpr char kSingleName[] = "model.safetensors";
constexpr char kIndexName[] = "model.safetensors.index.json";

std::string shard_name(int shard, int shards) {
  char name[64];
  std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", shard + 1, shards);
  return name;
}

// Whether `name` is a weights file a save writes: model.safetensors, its index, or a shard
// model-NNNNN-of-NNNNN.safetensors.
bool is_weights_file(const std::string& name) {
  if (name == kSingleName || name == kIndexName) return true;
  static const std::string shard = "model-#####-of-#####.safetensors";  // # a digit
  if (name.size() != shard.size()) return false;
  for (size_t i = 0; i < shard.size(); ++i) {
    const bool digit = name[i] >= '0' && name[i] <= '9';
    if (shard[i] == '#' ? !digit : name[i] != shard[i]) return false;
  }
  return true;
}

// Whether `name` is the temporary file of an interrupted save's weights
// (".model*.safetensors.partial") or index (".model.safetensors.index.json.partial"):
// AtomicFile's names.
bool is_partial_weights_file(const std::string& name) {
  const std::string_view prefix = ".model", suffix = ".safetensors.partial";
  return name == partial_path(kIndexName) || (name.size() >= prefix.size() + suffix.size() &&
                                              starts_with(name, prefix) && ends_with(name, suffix));
}

// Removes the files of `dir` for which `matches(name)` holds and that are not in `keep`.
void remove_matching(const std::string& dir, bool (*matches)(const std::string&),
                     const std::vector<std::string>& keep, const char* what) {
  std::vector<fs::path> doomed;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (matches(name) && std::find(keep.begin(), keep.end(), name) == keep.end()) {
      doomed.push_back(entry.path());
    }
  }
  for (const fs::path& path : doomed) {
    std::error_code ec;
    fs::remove(path, ec);
    LLMFT_REQUIRE(!ec, "cannot remove " << path.string() << ", " << what << ": " << ec.message()
                                        << "; remove it by hand");
  }
}

// The file `name` of `dir`, if an earlier save left it and this one did not write it.
void remove_stale(const std::string& dir, const std::string& name) {
  const fs::path path = fs::path(dir) / name;
  std::error_code ec;
  fs::remove(path, ec);
  LLMFT_REQUIRE(!ec, "cannot remove " << path.string() << ", left by an earlier save: "
                                      << ec.message() << "; remove it by hand");
}

// Weight files an earlier save may have left in `dir` that this one did not write.
void remove_stale_weights(const std::string& dir, const std::vector<std::string>& written) {
  remove_matching(dir, is_weights_file, written, "left by an earlier save");
}

// Copies (rows, cols) row-major `src` into (cols, rows) `dst`.
void transpose(const float* src, float* dst, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  }
}

// safetensors' name of a stored dtype.
const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "F32";
    case DType::bf16:
      return "BF16";
    case DType::f16:
      return "F16";
    default:
      LLMFT_FAIL("a model is written in f32, bf16 or fp16, not " << dtype_name(dtype));
  }
}

// transformers' name of it, for config.json's "dtype".
const char* torch_dtype(DType dtype) {
  return dtype == DType::bf16 ? "bfloat16" : dtype == DType::f16 ? "float16" : "float32";
}

}  // namespace

SafeTensor hf_tensor(const ParamInfo& p, const float* unit_values, DType dtype) {
  SafeTensor t;
  t.name = p.name;
  t.dtype = safetensors_dtype(dtype);
  const Shape shape = p.hf_transposed ? Shape{p.shape[1], p.shape[0]} : p.shape;
  t.shape.assign(shape.begin(), shape.end());
  const float* src = unit_values + p.offset;
  std::vector<float> transposed;
  if (p.hf_transposed) {
    transposed.resize(static_cast<size_t>(p.numel()));
    transpose(src, transposed.data(), p.shape[0], p.shape[1]);
    src = transposed.data();
  }
  const std::vector<uint8_t> bytes = to_dtype_bytes(src, p.numel(), dtype);
  t.bytes.assign(bytes.begin(), bytes.end());
  return t;
}

void write_hf_safetensors(const std::string& path, const std::vector<UnitLayout>& units,
                          const UnitValues& values) {
  std::vector<SafeTensor> tensors;
  for (size_t u = 0; u < units.size(); ++u) {
    for (const ParamInfo& p : units[u].params) tensors.push_back(hf_tensor(p, values[u].data()));
  }
  write_safetensors(path, tensors, {{"format", "pt"}});
}

HfModelWriter::HfModelWriter(std::string dir, ModelConfig config, std::vector<UnitLayout> units,
                             uint64_t max_shard_bytes, DType dtype, ModelDirectoryFiles files)
    : dir_(std::move(dir)),
      config_(std::move(config)),
      units_(std::move(units)),
      dtype_(dtype),
      files_(std::move(files)) {
  safetensors_dtype(dtype_);  // refuses a dtype weights are not written in
  LLMFT_REQUIRE(max_shard_bytes > 0, "--save-max-shard-size must be positive");
  ensure_directory(dir_, "model directory");
  remove_matching(dir_, is_partial_weights_file, {}, "left by an interrupted save");
  int shards = 0;
  uint64_t shard_bytes = 0;
  for (const UnitLayout& unit : units_) {
    for (const ParamInfo& p : unit.params) {
      const uint64_t bytes = static_cast<uint64_t>(p.numel()) * dtype_size(dtype_);
      if (shards == 0 || (shard_bytes > 0 && shard_bytes + bytes > max_shard_bytes)) {
        ++shards;
        shard_bytes = 0;
      }
      shard_bytes += bytes;
      total_bytes_ += bytes;
      shard_of_tensor_.push_back(shards - 1);
    }
  }
  for (int s = 0; s < shards; ++s) {
    shard_names_.push_back(shards == 1 ? kSingleName : shard_name(s, shards));
  }
}

void HfModelWriter::add_unit(const std::vector<float>& values) {
  LLMFT_REQUIRE(next_unit_ < units_.size(), "internal: more units than the model has");
  const UnitLayout& unit = units_[next_unit_++];
  for (const ParamInfo& p : unit.params) {
    const float* first = values.data() + p.offset;
    const float* bad =
        std::find_if(first, first + p.numel(), [](float v) { return !std::isfinite(v); });
    if (bad != first + p.numel()) {
      throw DivergedError("not saving to " + dir_ + ": tensor " + p.name + " holds " +
                          std::to_string(*bad) +
                          " (the run diverged); the directory was left as it was");
    }
    pending_.push_back(hf_tensor(p, values.data(), dtype_));
    const int shard = shard_of_tensor_[next_tensor_++];
    const bool shard_full =
        next_tensor_ == shard_of_tensor_.size() || shard_of_tensor_[next_tensor_] != shard;
    if (shard_full) {
      staged_.push_back(
          std::make_unique<AtomicFile>((fs::path(dir_) / shard_names_[shard]).string()));
      write_safetensors(*staged_.back(), pending_, {{"format", "pt"}});
      staged_.back()->finish();
      pending_.clear();
    }
  }
}

void HfModelWriter::finish() {
  LLMFT_REQUIRE(next_unit_ == units_.size(), "internal: the model directory misses units");
  // The other files are staged before anything is published, so that a failure leaves none.
  std::vector<std::unique_ptr<AtomicFile>> others;
  std::vector<std::string> other_names;
  for (const auto& [name, contents] : files_.files) {
    others.push_back(std::make_unique<AtomicFile>((fs::path(dir_) / name).string()));
    others.back()->write(contents.data(), contents.size());
    others.back()->finish();
    other_names.push_back(name);
  }
  for (const std::unique_ptr<AtomicFile>& shard : staged_) shard->publish();
  std::vector<std::string> written = shard_names_;
  if (shard_names_.size() > 1) {
    Json::Object weight_map;
    size_t tensor = 0;
    for (const UnitLayout& unit : units_) {
      for (const ParamInfo& p : unit.params) {
        weight_map.emplace_back(p.name, Json::string(shard_names_[shard_of_tensor_[tensor++]]));
      }
    }
    std::sort(weight_map.begin(), weight_map.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const Json index = Json::object(
        {{"metadata",
          Json::object({{"total_size", Json::number(static_cast<double>(total_bytes_))}})},
         {"weight_map", Json::object(std::move(weight_map))}});
    write_file_atomically((fs::path(dir_) / kIndexName).string(), index.dump() + "\n");
    written.push_back(kIndexName);
  }
  remove_stale_weights(dir_, written);
  for (const std::unique_ptr<AtomicFile>& file : others) file->publish();
  // A save with a tokenizer replaces an earlier save's tokenizer files whole (a vocab.json
  // left beside a new tokenizer.json would mislead); one without leaves the directory's
  // (a downloaded model's tokenizer stays). What describes the old weights goes with them.
  const auto writes = [&](const std::string& name) {
    return std::find(other_names.begin(), other_names.end(), name) != other_names.end();
  };
  if (writes("tokenizer.json") || writes("vocab.json")) {
    for (const std::string& name : tokenizer_file_names()) {
      if (!writes(name)) remove_stale(dir_, name);
    }
  }
  for (const std::string& name : weight_description_file_names()) {
    if (!writes(name)) remove_stale(dir_, name);
  }
  Json config = hf_config_json(config_);
  config.set("dtype", Json::string(torch_dtype(dtype_)));
  write_file_atomically((fs::path(dir_) / "config.json").string(), config.dump() + "\n");
}

std::string HfModelWriter::describe() const {
  std::string text = "config.json, ";
  text += shard_names_.size() == 1
              ? std::string(kSingleName)
              : std::to_string(shard_names_.size()) + " shards + " + kIndexName;
  text += std::string(" (") + dtype_name(dtype_) + ")";
  for (const auto& [name, contents] : files_.files) text += ", " + name;
  return text;
}

void write_hf_model_dir(const std::string& dir, const ModelConfig& config,
                        const std::vector<UnitLayout>& units, const UnitValues& values,
                        uint64_t max_shard_bytes) {
  HfModelWriter writer(dir, config, units, max_shard_bytes);
  for (const std::vector<float>& unit : values) writer.add_unit(unit);
  writer.finish();
}

}  // namespace llmft::io
