#include "io/hf_weight_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/text_affixes.h"
#include "io/json.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;

constexpr char kIndexName[] = "model.safetensors.index.json";
constexpr char kSingleName[] = "model.safetensors";

Json read_index(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LLMFT_REQUIRE(in, "cannot read the weight index " << path << ": check the path");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Error& e) {
    LLMFT_FAIL("weight index " << path << " is not valid JSON (" << e.what() << ")");
  }
}

}  // namespace

HfWeightFiles::HfWeightFiles(const std::string& path) {
  std::string file = path;
  if (fs::is_directory(path)) {
    const fs::path index = fs::path(path) / kIndexName, single = fs::path(path) / kSingleName;
    LLMFT_REQUIRE(fs::exists(index) || fs::exists(single),
                  "--init-from " << path << ": the directory holds neither " << kIndexName
                                 << " nor " << kSingleName
                                 << "; point it at a Hugging Face model directory");
    file = (fs::exists(index) ? index : single).string();
  }
  origin_ = file;
  if (!ends_with(file, ".json")) {
    LLMFT_REQUIRE(fs::is_regular_file(file), "cannot read weights " << file << ": no such file");
    shards_.push_back(Shard{file, nullptr, nullptr});
    return;
  }
  indexed_ = true;
  const Json index = read_index(file);
  const Json* map = index.is_object() ? index.find("weight_map") : nullptr;
  LLMFT_REQUIRE(map != nullptr && map->is_object(),
                "weight index " << file << " has no \"weight_map\" object of tensor -> shard file");
  std::unordered_map<std::string, size_t> shard_by_file;
  for (const auto& [tensor, shard] : map->as_object()) {
    LLMFT_REQUIRE(shard.is_string() && !shard.as_string().empty(),
                  "weight index " << file << ": tensor " << Json::quote(tensor) << " maps to "
                                  << shard.dump() << ", not a shard file name");
    const std::string& name = shard.as_string();
    auto [where, added] = shard_by_file.emplace(name, shards_.size());
    if (added) {
      const fs::path shard_path = fs::path(file).parent_path() / name;
      LLMFT_REQUIRE(fs::is_regular_file(shard_path),
                    "weight index " << file << " places tensor " << Json::quote(tensor) << " in "
                                    << name << ", but " << shard_path.string()
                                    << " is missing; download every shard the index lists");
      shards_.push_back(Shard{shard_path.string(), nullptr, nullptr});
    }
    // Json::parse refuses a key given twice, so each tensor has one shard.
    shard_of_.emplace(tensor, where->second);
  }
  LLMFT_REQUIRE(!shards_.empty(), "weight index " << file << " lists no tensors");
}

HfWeightFiles::~HfWeightFiles() = default;

HfWeightFiles::Shard& HfWeightFiles::open(size_t index) {
  Shard& shard = shards_[index];
  if (shard.header) return shard;
  shard.header = std::make_unique<SafetensorsHeader>(shard.path);
  shard.file = std::make_unique<PositionedFile>(shard.path);
  if (!indexed_) return shard;
  // The shard and the index must agree on which tensors it holds.
  size_t listed = 0;
  for (const SafetensorsEntry& entry : shard.header->entries()) {
    const auto where = shard_of_.find(entry.name);
    LLMFT_REQUIRE(
        where != shard_of_.end() && where->second == index,
        "shard " << shard.path << " holds tensor " << Json::quote(entry.name)
                 << ", which the index " << origin_
                 << (where == shard_of_.end() ? std::string(" does not list")
                                              : " places in " + shards_[where->second].path)
                 << "; the download is inconsistent: fetch the shards and the index "
                    "again");
  }
  for (const auto& [tensor, shard_index] : shard_of_) listed += shard_index == index;
  LLMFT_REQUIRE(listed == shard.header->entries().size(),
                "the index " << origin_ << " places " << listed << " tensors in " << shard.path
                             << ", but its header holds " << shard.header->entries().size()
                             << "; the download is inconsistent: fetch the shards and the index "
                                "again");
  return shard;
}

HfWeightFiles::Tensor HfWeightFiles::locate(const std::string& name) {
  size_t index = 0;
  if (indexed_) {
    const auto where = shard_of_.find(name);
    LLMFT_REQUIRE(where != shard_of_.end(), "the weight index "
                                                << origin_ << " has no tensor " << Json::quote(name)
                                                << "; check that --model matches the checkpoint");
    index = where->second;
  }
  Shard& shard = open(index);
  const SafetensorsEntry* entry = shard.header->find(name);
  LLMFT_REQUIRE(entry != nullptr, "safetensors file " << shard.path << " has no tensor "
                                                      << Json::quote(name)
                                                      << "; check that --model matches the "
                                                         "checkpoint");
  return Tensor{shard.file.get(), entry};
}

uint64_t HfWeightFiles::bytes_read() const {
  uint64_t bytes = 0;
  for (const Shard& shard : shards_) {
    if (shard.header) bytes += shard.header->header_bytes() + shard.file->bytes_read();
  }
  return bytes;
}

}  // namespace llmft::io
