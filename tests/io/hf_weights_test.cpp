// Hugging Face weights written by HfModelWriter (one file or shards + index) and read back
// by HfWeightLoader: whole units and tensor-parallel slices equal core/tp_slice's slices of
// what was written, a rank reads only its slices' bytes, BF16/F16 files convert as
// core/host_convert does, a broken download or non-finite weights are refused naming the
// file, and a failed save leaves the directory as it was.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host_convert.h"
#include "core/model_config.h"
#include "core/model_factory.h"
#include "core/tp_slice.h"
#include "io/hf_checkpoint.h"
#include "io/hf_weight_loader.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace llmft;
using llmft::testing::TempDir;

namespace {

io::UnitValues random_values(const std::vector<UnitLayout>& units, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  io::UnitValues values;
  for (const UnitLayout& unit : units) {
    std::vector<float>& v = values.emplace_back(static_cast<size_t>(unit.numel));
    for (float& x : v) x = value(rng);
  }
  return values;
}

uint64_t weight_bytes(const std::vector<UnitLayout>& units) {
  uint64_t bytes = 0;
  for (const UnitLayout& unit : units) bytes += static_cast<uint64_t>(unit.numel) * 4;
  return bytes;
}

uint64_t header_bytes(const TempDir& dir) {
  uint64_t bytes = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".safetensors") {
      bytes += io::SafetensorsHeader(entry.path().string()).header_bytes();
    }
  }
  return bytes;
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Every file of the directory: name -> bytes.
std::map<std::string, std::string> contents(const TempDir& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    std::ifstream in(entry.path(), std::ios::binary);
    files[entry.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

void load_whole(const std::string& path, const std::vector<UnitLayout>& units) {
  io::HfWeightLoader loader(path);
  for (const UnitLayout& unit : units) loader.read_unit(unit, unit, TpSlice{});
}

}  // namespace

TEST_CASE("sharded save and load round-trip every unit, whole and as tensor-parallel slices") {
  for (const char* preset : {"gpt2-tiny", "llama-tiny"}) {
    CAPTURE(preset);
    const ModelConfig config = preset_config(preset);
    const std::vector<UnitLayout> whole = unit_layouts(config);
    const io::UnitValues values = random_values(whole, 7);
    TempDir dir;
    // 64 KiB shards: several per block, and the embedding alone exceeds one.
    io::HfModelWriter writer(dir.path().string(), config, whole, 64 * 1024);
    for (const std::vector<float>& unit : values) writer.add_unit(unit);
    writer.finish();
    CHECK(writer.shard_count() > 4);
    CHECK(fs::exists(dir.path() / "model.safetensors.index.json"));
    CHECK_FALSE(fs::exists(dir.path() / "model.safetensors"));

    for (int tp : {1, 2, 4}) {
      for (int rank = 0; rank < tp; ++rank) {
        CAPTURE(tp);
        CAPTURE(rank);
        const TpSlice slice{rank, tp};
        const std::vector<UnitLayout> local = unit_layouts(config, slice);
        io::HfWeightLoader loader(dir.path().string());
        for (size_t u = 0; u < whole.size(); ++u) {
          CHECK(loader.read_unit(whole[u], local[u], slice) ==
                slice_unit(whole[u], local[u], slice, values[u]));
        }
        if (tp == 1) CHECK(loader.bytes_read() == weight_bytes(whole) + header_bytes(dir));
      }
    }
  }
}

TEST_CASE("a tensor-parallel rank reads its slices' bytes, not the whole checkpoint") {
  // llama-tiny at tp 2: the split matrices and the vocabulary rows halve (257 rows: rank 0
  // reads 129, rank 1 128 and pads one); norms are read whole by both.
  const ModelConfig config = preset_config("llama-tiny");
  const std::vector<UnitLayout> whole = unit_layouts(config);
  TempDir dir;
  io::write_hf_model_dir(dir.path().string(), config, whole, random_values(whole, 3), 1 << 20);
  uint64_t split_bytes = 0, replicated_bytes = 0;
  const std::vector<UnitLayout> local = unit_layouts(config, TpSlice{0, 2});
  for (size_t u = 0; u < whole.size(); ++u) {
    for (size_t i = 0; i < whole[u].params.size(); ++i) {
      const uint64_t bytes = static_cast<uint64_t>(whole[u].params[i].numel()) * 4;
      (local[u].params[i].tp_split == TpSplit::replicated ? replicated_bytes : split_bytes) +=
          bytes;
    }
  }
  const uint64_t row_bytes = static_cast<uint64_t>(config.hidden) * 4;
  const int vocab_matrices = config.tie_embeddings ? 1 : 2;
  for (int rank = 0; rank < 2; ++rank) {
    const TpSlice slice{rank, 2};
    const std::vector<UnitLayout> rank_local = unit_layouts(config, slice);
    io::HfWeightLoader loader(dir.path().string());
    for (size_t u = 0; u < whole.size(); ++u) loader.read_unit(whole[u], rank_local[u], slice);
    // Half of each split tensor, the odd vocabulary row going to rank 0.
    const uint64_t expected = replicated_bytes + (split_bytes - vocab_matrices * row_bytes) / 2 +
                              (rank == 0 ? vocab_matrices * row_bytes : 0) + header_bytes(dir);
    CHECK(loader.bytes_read() == expected);
  }
}

TEST_CASE("BF16 and F16 weights are read as core/host_convert widens them") {
  const ModelConfig config = preset_config("gpt2-tiny");
  const std::vector<UnitLayout> units = unit_layouts(config);
  const io::UnitValues values = random_values(units, 11);
  for (DType dtype : {DType::bf16, DType::f16}) {
    TempDir dir;
    std::vector<io::SafeTensor> tensors;
    for (size_t u = 0; u < units.size(); ++u) {
      for (const ParamInfo& p : units[u].params) {
        io::SafeTensor t = io::hf_tensor(p, values[u].data());
        t.dtype = dtype == DType::bf16 ? "BF16" : "F16";
        t.bytes = to_dtype_bytes(reinterpret_cast<const float*>(t.bytes.data()),
                                 static_cast<int64_t>(t.bytes.size() / 4), dtype);
        tensors.push_back(std::move(t));
      }
    }
    io::write_safetensors(dir.file("model.safetensors"), tensors);
    io::HfWeightLoader loader(dir.path().string());
    for (size_t u = 0; u < units.size(); ++u) {
      const std::vector<float> expected =
          from_dtype_bytes(to_dtype_bytes(values[u].data(), units[u].numel, dtype), dtype);
      // Rounding commutes with the transposition of GPT-2's Conv1D weights.
      CHECK(loader.read_unit(units[u], units[u], TpSlice{}) == expected);
    }
  }
}

TEST_CASE("a single file after a sharded save in the same directory removes the shards") {
  const ModelConfig config = preset_config("gpt2-tiny");
  const std::vector<UnitLayout> units = unit_layouts(config);
  TempDir dir;
  io::write_hf_model_dir(dir.path().string(), config, units, random_values(units, 1), 64 * 1024);
  io::write_hf_model_dir(dir.path().string(), config, units, random_values(units, 2));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"config.json", "model.safetensors"});
}

TEST_CASE("a broken download is refused naming the file") {
  const ModelConfig config = preset_config("gpt2-tiny");
  const std::vector<UnitLayout> units = unit_layouts(config);
  TempDir dir;
  io::write_hf_model_dir(dir.path().string(), config, units, random_values(units, 5), 64 * 1024);
  const std::string index_path = dir.file("model.safetensors.index.json");
  const io::Json index = io::Json::parse([&] {
    std::ifstream in(index_path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }());
  const io::Json::Object& map = index.at("weight_map").as_object();
  REQUIRE(map.size() > 2);

  auto write_index = [&](io::Json::Object weight_map) {
    dir.write("model.safetensors.index.json",
              io::Json::object({{"weight_map", io::Json::object(std::move(weight_map))}}).dump());
  };

  SUBCASE("a shard missing") {
    const std::string shard = map[0].second.as_string();
    fs::rename(dir.path() / shard, dir.path() / (shard + ".part"));
    const std::string message = error_of([&] { load_whole(dir.path().string(), units); });
    CHECK(message.find(index_path) != std::string::npos);
    CHECK(message.find(shard + " is missing") != std::string::npos);
  }
  SUBCASE("a tensor named twice") {
    io::Json::Object twice = map;
    twice.push_back(twice[0]);
    write_index(twice);
    const std::string message = error_of([&] { load_whole(dir.path().string(), units); });
    CHECK(message.find("repeats key \"" + map[0].first + "\"") != std::string::npos);
    CHECK(message.find(index_path) != std::string::npos);
  }
  SUBCASE("a shard whose header disagrees with the index") {
    io::Json::Object moved = map;
    // The first tensor is said to lie in another tensor's shard.
    const auto other = std::find_if(moved.begin(), moved.end(), [&](const auto& entry) {
      return entry.second.as_string() != moved[0].second.as_string();
    });
    REQUIRE(other != moved.end());
    moved[0].second = other->second;
    write_index(moved);
    const std::string message = error_of([&] { load_whole(dir.path().string(), units); });
    CHECK(message.find("the download is inconsistent") != std::string::npos);
    CHECK(message.find(".safetensors") != std::string::npos);
  }
  SUBCASE("a tensor the model needs is not in the index") {
    io::Json::Object fewer(map.begin() + 1, map.end());
    const std::string missing = map[0].first;
    // Its shard still holds it, so the index and that shard disagree, or the tensor is
    // simply absent: either way the message names the index or the shard.
    write_index(fewer);
    const std::string message = error_of([&] { load_whole(dir.path().string(), units); });
    CHECK(message.find(missing) != std::string::npos);
  }
  SUBCASE("a directory with no weights") {
    TempDir empty;
    const std::string message = error_of([&] { load_whole(empty.path().string(), units); });
    CHECK(message.find("holds neither model.safetensors.index.json nor model.safetensors") !=
          std::string::npos);
  }
}

TEST_CASE("a save removes the weight files an earlier save left there, and nothing else") {
  const ModelConfig config = preset_config("gpt2-tiny");
  const std::vector<UnitLayout> units = unit_layouts(config);
  TempDir dir;
  // 64 KiB shards: an index and many model-NNNNN-of-NNNNN.safetensors files.
  io::write_hf_model_dir(dir.path().string(), config, units, random_values(units, 1), 64 * 1024);
  const std::vector<std::string> others = {
      "notes.txt", "model-1-of-2.safetensors", "model-00001-of-00002.safetensors.bak",
      "xmodel-00001-of-00002.safetensors", ".notes.txt.partial"};
  for (const std::string& name : others) dir.write(name, "kept");
  dir.write(".model-00002-of-00009.safetensors.partial", "interrupted");
  dir.write(".model.safetensors.index.json.partial", "interrupted");
  // One file now: the shards, the index and the partial files go; the others stay.
  io::write_hf_model_dir(dir.path().string(), config, units, random_values(units, 2), 1 << 30);
  std::vector<std::string> weights, left;
  for (const auto& [name, bytes] : contents(dir)) {
    if (std::find(others.begin(), others.end(), name) != others.end()) {
      CHECK(bytes == "kept");
    } else if (name.find("safetensors") != std::string::npos) {
      weights.push_back(name);
    }
  }
  CHECK(weights == std::vector<std::string>{"model.safetensors"});
  for (const std::string& name : others) CHECK(fs::exists(dir.path() / name));
}

TEST_CASE("a save with non-finite weights leaves the directory as it was") {
  const ModelConfig config = preset_config("gpt2-tiny");
  const std::vector<UnitLayout> units = unit_layouts(config);
  TempDir dir;
  io::write_hf_model_dir(dir.path().string(), config, units, random_values(units, 1), 64 * 1024);
  const std::map<std::string, std::string> before = contents(dir);
  // An interrupted save's partial file, which the next save clears away.
  dir.write(".model-00002-of-00009.safetensors.partial", "partial");
  io::UnitValues diverged = random_values(units, 2);
  diverged.back()[3] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_AS(io::write_hf_model_dir(dir.path().string(), config, units, diverged, 64 * 1024),
                  DivergedError);
  CHECK(contents(dir) == before);
}

TEST_CASE("weights holding NaN or inf are refused when loaded, naming the tensor") {
  const ModelConfig config = preset_config("llama-tiny");
  const std::vector<UnitLayout> units = unit_layouts(config);
  io::UnitValues values = random_values(units, 4);
  values[1][units[1].params[2].offset + 5] = std::numeric_limits<float>::quiet_NaN();
  TempDir dir;
  std::vector<io::SafeTensor> tensors;
  for (size_t u = 0; u < units.size(); ++u) {
    for (const ParamInfo& p : units[u].params)
      tensors.push_back(io::hf_tensor(p, values[u].data()));
  }
  io::write_safetensors(dir.file("model.safetensors"), tensors);
  const std::string message = error_of([&] { load_whole(dir.path().string(), units); });
  CHECK(message.find(units[1].params[2].name + " holds nan") != std::string::npos);
}
