#include "io/safetensors.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json.h"

namespace llmft::io {

namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

struct DtypeSize {
  std::string_view name;
  size_t bytes;
};

constexpr DtypeSize kDtypeSizes[] = {
    {"F64", 8},     {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"F8_E4M3", 1},
    {"F8_E5M2", 1}, {"I64", 8}, {"I32", 4}, {"I16", 2},  {"I8", 1},
    {"U64", 8},     {"U32", 4}, {"U16", 2}, {"U8", 1},   {"BOOL", 1},
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

// numel * dtype size, or false if a dimension is negative or the product overflows.
bool tensor_byte_count(const std::vector<int64_t>& shape, size_t dtype_size, uint64_t* bytes) {
  uint64_t count = dtype_size;
  for (int64_t dim : shape) {
    if (dim < 0) return false;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count)) return false;
  }
  *bytes = count;
  return true;
}

void append_le64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint64_t read_le64(const unsigned char* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

void check_unique(std::vector<std::string_view> names, const std::string& path,
                  std::string_view what) {
  std::sort(names.begin(), names.end());
  auto duplicate = std::adjacent_find(names.begin(), names.end());
  LLMFT_REQUIRE(duplicate == names.end(), "cannot write safetensors file "
                                              << path << ": " << what << " "
                                              << Json::quote(*duplicate)
                                              << " appears twice; names must be unique");
}

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// A tensor entry of the header; offsets are into the data buffer until the header is read.
SafetensorsEntry parse_tensor_entry(const std::string& name, const Json& entry,
                                    uint64_t buffer_size) {
  SafetensorsEntry result;
  result.name = name;
  result.dtype = entry.at("dtype").as_string();
  size_t dtype_size = safetensors_dtype_size(result.dtype);
  for (const Json& dim : entry.at("shape").as_array()) result.shape.push_back(dim.as_int());
  const Json::Array& offsets = entry.at("data_offsets").as_array();
  LLMFT_REQUIRE(offsets.size() == 2,
                "data_offsets must be [begin, end], got " << entry.at("data_offsets").dump());
  int64_t begin = offsets[0].as_int();
  int64_t end = offsets[1].as_int();
  LLMFT_REQUIRE(0 <= begin && begin <= end && static_cast<uint64_t>(end) <= buffer_size,
                "data_offsets [" << begin << ", " << end << "] lie outside the " << buffer_size
                                 << "-byte data buffer; the file is truncated or corrupt");
  uint64_t expected = 0;
  LLMFT_REQUIRE(tensor_byte_count(result.shape, dtype_size, &expected),
                "shape " << shape_text(result.shape) << " is invalid");
  LLMFT_REQUIRE(static_cast<uint64_t>(end - begin) == expected,
                "data_offsets [" << begin << ", " << end << "] span " << end - begin
                                 << " bytes, but dtype " << result.dtype << " and shape "
                                 << shape_text(result.shape) << " need " << expected);
  result.file_offset = begin;
  result.bytes = expected;
  return result;
}

}  // namespace

size_t safetensors_dtype_size(std::string_view dtype) {
  for (const DtypeSize& entry : kDtypeSizes) {
    if (entry.name == dtype) return entry.bytes;
  }
  std::string known;
  for (const DtypeSize& entry : kDtypeSizes) {
    known += known.empty() ? "" : ", ";
    known += entry.name;
  }
  LLMFT_FAIL("unknown safetensors dtype " << Json::quote(dtype) << "; expected one of " << known);
}

void write_safetensors(const std::string& path, const std::vector<SafeTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
  AtomicFile file(path);
  write_safetensors(file, tensors, metadata);
  file.commit();
}

void write_safetensors(AtomicFile& file, const std::vector<SafeTensor>& tensors,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
  const std::string& path = file.path();
  std::vector<std::string_view> names;
  for (const SafeTensor& tensor : tensors) {
    LLMFT_REQUIRE(!tensor.name.empty() && tensor.name != kMetadataKey,
                  "cannot write safetensors file " << path << ": tensor name "
                                                   << Json::quote(tensor.name)
                                                   << " is reserved or empty; rename it");
    names.push_back(tensor.name);
  }
  check_unique(names, path, "tensor name");
  std::vector<std::string_view> keys;
  for (const auto& [key, value] : metadata) keys.push_back(key);
  check_unique(keys, path, "metadata key");

  // Widest dtype first keeps every tensor aligned to its element size.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<size_t> dtype_sizes;
  for (const SafeTensor& tensor : tensors) {
    try {
      dtype_sizes.push_back(safetensors_dtype_size(tensor.dtype));
    } catch (const Error& e) {
      LLMFT_FAIL("cannot write safetensors file " << path << ": tensor " << Json::quote(tensor.name)
                                                  << ": " << e.what());
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return dtype_sizes[a] > dtype_sizes[b]; });

  Json::Object header;
  if (!metadata.empty()) {
    Json::Object entries;
    for (const auto& [key, value] : metadata) entries.emplace_back(key, Json::string(value));
    header.emplace_back(kMetadataKey, Json::object(std::move(entries)));
  }
  uint64_t offset = 0;
  for (size_t index : order) {
    const SafeTensor& tensor = tensors[index];
    uint64_t expected = 0;
    LLMFT_REQUIRE(tensor_byte_count(tensor.shape, dtype_sizes[index], &expected),
                  "cannot write safetensors file "
                      << path << ": tensor " << Json::quote(tensor.name) << " has shape "
                      << shape_text(tensor.shape)
                      << " with a negative dimension or overflowing size");
    LLMFT_REQUIRE(tensor.bytes.size() == expected,
                  "cannot write safetensors file "
                      << path << ": tensor " << Json::quote(tensor.name) << " has "
                      << tensor.bytes.size() << " bytes, but dtype " << tensor.dtype
                      << " and shape " << shape_text(tensor.shape) << " need " << expected);
    Json::Array shape;
    for (int64_t dim : tensor.shape) shape.push_back(Json::number(static_cast<double>(dim)));
    Json::Array offsets = {Json::number(static_cast<double>(offset)),
                           Json::number(static_cast<double>(offset + expected))};
    header.emplace_back(tensor.name,
                        Json::object({{"dtype", Json::string(tensor.dtype)},
                                      {"shape", Json::array(std::move(shape))},
                                      {"data_offsets", Json::array(std::move(offsets))}}));
    offset += expected;
  }

  std::string header_text = Json::object(std::move(header)).dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  std::string prefix;
  append_le64(prefix, header_text.size());

  file.write(prefix.data(), prefix.size());
  file.write(header_text.data(), header_text.size());
  for (size_t index : order) file.write(tensors[index].bytes.data(), tensors[index].bytes.size());
}

SafetensorsHeader::SafetensorsHeader(const std::string& path) : path_(path) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  LLMFT_REQUIRE(file != nullptr, "cannot open safetensors file "
                                     << path << ": " << std::strerror(errno) << "; check the path");
  struct stat info;
  LLMFT_REQUIRE(::fstat(::fileno(file.get()), &info) == 0,
                "cannot stat safetensors file " << path << ": " << std::strerror(errno));
  const uint64_t file_size = info.st_size;
  const std::string not_safetensors = "; the file is truncated or not in safetensors format";

  unsigned char length_bytes[8];
  LLMFT_REQUIRE(file_size >= 8 && std::fread(length_bytes, 1, 8, file.get()) == 8,
                "safetensors file " << path << " is " << file_size
                                    << " bytes, too short for the 8-byte header length"
                                    << not_safetensors);
  const uint64_t header_size = read_le64(length_bytes);
  LLMFT_REQUIRE(header_size <= file_size - 8,
                "safetensors file " << path << ": header length " << header_size << " exceeds the "
                                    << file_size << "-byte file" << not_safetensors);
  std::string header_text(header_size, '\0');
  LLMFT_REQUIRE(
      std::fread(header_text.data(), 1, header_size, file.get()) == header_size,
      "cannot read the header of safetensors file " << path << ": " << std::strerror(errno));
  header_bytes_ = 8 + header_size;
  const uint64_t buffer_size = file_size - header_bytes_;

  Json header;
  try {
    header = Json::parse(header_text);
  } catch (const Error& e) {
    LLMFT_FAIL("safetensors file " << path << ": header is not valid JSON (" << e.what() << ")"
                                   << not_safetensors);
  }
  LLMFT_REQUIRE(header.is_object(), "safetensors file " << path
                                                        << ": header must be a JSON object, got "
                                                        << Json::kind_name(header.kind()));

  for (const auto& [name, value] : header.as_object()) {
    try {
      if (name == kMetadataKey) {
        for (const auto& [key, text] : value.as_object()) {
          metadata_.emplace_back(key, text.as_string());
        }
      } else {
        entries_.push_back(parse_tensor_entry(name, value, buffer_size));
      }
    } catch (const Error& e) {
      LLMFT_FAIL("safetensors file " << path << ": entry " << Json::quote(name) << ": "
                                     << e.what());
    }
  }

  // The reference implementation requires the tensors to tile the buffer exactly.
  std::vector<size_t> by_offset(entries_.size());
  std::iota(by_offset.begin(), by_offset.end(), 0);
  std::sort(by_offset.begin(), by_offset.end(),
            [&](size_t a, size_t b) { return entries_[a].file_offset < entries_[b].file_offset; });
  uint64_t next = 0;
  for (size_t index : by_offset) {
    const SafetensorsEntry& entry = entries_[index];
    LLMFT_REQUIRE(entry.file_offset == next,
                  "safetensors file " << path << ": tensor " << Json::quote(entry.name)
                                      << " starts at byte " << entry.file_offset
                                      << " of the data buffer, expected " << next
                                      << " (tensors overlap or leave a gap); the file is corrupt");
    next = entry.file_offset + entry.bytes;
  }
  LLMFT_REQUIRE(next == buffer_size, "safetensors file " << path << ": tensors cover " << next
                                                         << " bytes but the data buffer has "
                                                         << buffer_size
                                                         << " (trailing bytes); the file is "
                                                            "corrupt");
  for (SafetensorsEntry& entry : entries_) entry.file_offset += header_bytes_;
}

const SafetensorsEntry* SafetensorsHeader::find(std::string_view name) const {
  for (const SafetensorsEntry& entry : entries_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const SafetensorsHeader header(path);
  metadata_ = header.metadata();
  FilePtr file(std::fopen(path.c_str(), "rb"));
  LLMFT_REQUIRE(file != nullptr, "cannot open safetensors file "
                                     << path << ": " << std::strerror(errno) << "; check the path");
  std::vector<const SafetensorsEntry*> by_offset;
  for (const SafetensorsEntry& entry : header.entries()) by_offset.push_back(&entry);
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
  LLMFT_REQUIRE(std::fseek(file.get(), static_cast<long>(header.header_bytes()), SEEK_SET) == 0,
                "cannot seek in safetensors file " << path << ": " << std::strerror(errno));
  std::vector<SafeTensor> read(header.entries().size());
  for (const SafetensorsEntry* entry : by_offset) {
    SafeTensor& tensor = read[entry - header.entries().data()];
    tensor.name = entry->name;
    tensor.dtype = entry->dtype;
    tensor.shape = entry->shape;
    tensor.bytes.resize(entry->bytes);
    LLMFT_REQUIRE(
        std::fread(tensor.bytes.data(), 1, tensor.bytes.size(), file.get()) == tensor.bytes.size(),
        "cannot read tensor " << Json::quote(tensor.name) << " from safetensors file " << path
                              << ": " << std::strerror(errno));
  }
  tensors_ = std::move(read);
}

const SafeTensor* SafetensorsFile::find(std::string_view name) const {
  for (const SafeTensor& tensor : tensors_) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

const SafeTensor& SafetensorsFile::at(std::string_view name) const {
  const SafeTensor* tensor = find(name);
  LLMFT_REQUIRE(tensor != nullptr, "safetensors file " << path_ << " has no tensor "
                                                       << Json::quote(name)
                                                       << "; check the model type and the "
                                                          "checkpoint");
  return *tensor;
}

}  // namespace llmft::io
