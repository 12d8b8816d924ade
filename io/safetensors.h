// Reading and writing the safetensors format (Hugging Face): an 8-byte little-endian
// header length N, N bytes of JSON header
//   {"__metadata__": {str: str}, "name": {"dtype": "F32", "shape": [2, 3],
//    "data_offsets": [begin, end]}, ...}
// padded with spaces to a multiple of 8, then the tensors' bytes back to back.
// Offsets are relative to the end of the header; tensors must tile the buffer
// exactly, as the reference implementation requires.
//
// Tensors are held as raw little-endian bytes; converting dtypes is the caller's job.
// Thread-safety: a const SafetensorsFile may be read from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/atomic_file.h"

namespace llmft::io {

struct SafeTensor {
  std::string name;
  std::string dtype;           // safetensors name: "F32", "BF16", "I64", ...
  std::vector<int64_t> shape;  // {} for a scalar
  std::vector<uint8_t> bytes;  // numel * safetensors_dtype_size(dtype) bytes
};

// Bytes per element: F64 8, F32 4, F16 2, BF16 2, F8_E4M3 1, F8_E5M2 1, I64 8, I32 4,
// I16 2, I8 1, U64 8, U32 4, U16 2, U8 1, BOOL 1. Throws llmft::Error for other names.
size_t safetensors_dtype_size(std::string_view dtype);

// Writes `tensors` and `metadata` to `path` atomically (see AtomicFile). Tensors are
// laid out widest dtype first, so each one is aligned to its element size.
// Throws llmft::Error naming the path and tensor if names repeat or are empty, a
// dtype is unknown, a dimension is negative or bytes.size() != numel * dtype size.
void write_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata = {});
// The same bytes into `file`, which the caller finishes and publishes (several shards of a
// model directory appear together).
void write_safetensors(AtomicFile& file, const std::vector<SafeTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata = {});

// The header of a safetensors file, read and validated without its tensors' bytes: each
// tensor's dtype, shape and where its bytes lie in the file. Errors name the file and the
// tensor.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t file_offset = 0;  // of the first byte, from the start of the file
  uint64_t bytes = 0;
};

class SafetensorsHeader {
 public:
  // Reads the header length and the JSON header of `path`; checks dtypes, shapes, and that
  // the tensors tile the data buffer exactly.
  explicit SafetensorsHeader(const std::string& path);

  const std::string& path() const { return path_; }
  // In header order.
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  // nullptr if there is no tensor named `name`.
  const SafetensorsEntry* find(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
  // Bytes of the length prefix and the JSON header.
  uint64_t header_bytes() const { return header_bytes_; }

 private:
  std::string path_;
  std::vector<SafetensorsEntry> entries_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  uint64_t header_bytes_ = 0;
};

// A safetensors file read whole into memory. The constructor validates the header
// length, the JSON header, dtype names, shapes and offsets; errors name the file and
// the tensor.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return path_; }
  // In header order.
  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  // nullptr if there is no tensor named `name`.
  const SafeTensor* find(std::string_view name) const;
  // Throws llmft::Error naming the file and the tensor if there is none.
  const SafeTensor& at(std::string_view name) const;
  // The "__metadata__" entries in header order; empty if the header has none.
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }

 private:
  std::string path_;
  std::vector<SafeTensor> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace llmft::io
