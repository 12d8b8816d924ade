// HfWeightFiles: the safetensors files of a Hugging Face model as it is downloaded — one
// model.safetensors, or shards model-0000K-of-0000N.safetensors listed by
// model.safetensors.index.json — and where each tensor's bytes lie. A shard's header is
// read when one of its tensors is first asked for, so a rank that needs only some
// tensors opens only their shards; the bytes read (headers and tensors) are counted.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/positioned_file.h"
#include "io/safetensors.h"

namespace llmft::io {

class HfWeightFiles {
 public:
  // `path`: a directory holding model.safetensors.index.json or model.safetensors, an index
  // file (*.index.json), or one .safetensors file. Throws llmft::Error naming the file for
  // a missing file, an index that is not JSON of the expected form (a tensor named twice
  // included) or names a shard that does not exist.
  explicit HfWeightFiles(const std::string& path);
  ~HfWeightFiles();

  struct Tensor {
    PositionedFile* file;
    const SafetensorsEntry* entry;
  };
  // Opens the tensor's shard if needed; throws naming the index (or file) when no shard
  // has the tensor, and naming the shard when its header disagrees with the index.
  Tensor locate(const std::string& name);

  // What was read from the files so far: headers and tensor bytes.
  uint64_t bytes_read() const;
  // The index or the single file, for messages.
  const std::string& origin() const { return origin_; }
  int shard_count() const { return static_cast<int>(shards_.size()); }

 private:
  struct Shard {
    std::string path;
    std::unique_ptr<SafetensorsHeader> header;  // null until opened
    std::unique_ptr<PositionedFile> file;
  };
  Shard& open(size_t shard);

  std::string origin_;
  bool indexed_ = false;
  std::vector<Shard> shards_;
  std::unordered_map<std::string, size_t> shard_of_;  // tensor name -> shard (indexed only)
};

}  // namespace llmft::io
