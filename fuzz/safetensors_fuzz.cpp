// Fuzz target: SafetensorsHeader and SafetensorsFile on arbitrary bytes. llmft::Error is
// the expected answer to a bad file; both readers must accept or refuse the same files,
// and agree on names, dtypes, shapes and byte counts.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/error.h"
#include "fuzz/check.h"
#include "fuzz/scratch_dir.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using llmft::io::SafetensorsFile;
  using llmft::io::SafetensorsHeader;
  const std::string path = llmft::fuzz::ScratchDir::get().write("model.safetensors", data, size);
  std::unique_ptr<SafetensorsHeader> header;
  std::unique_ptr<SafetensorsFile> file;
  try {
    header = std::make_unique<SafetensorsHeader>(path);
  } catch (const llmft::Error&) {
  }
  try {
    file = std::make_unique<SafetensorsFile>(path);
  } catch (const llmft::Error&) {
  }
  FUZZ_CHECK((header == nullptr) == (file == nullptr));
  if (file == nullptr) return 0;

  FUZZ_CHECK(header->entries().size() == file->tensors().size());
  FUZZ_CHECK(header->metadata() == file->metadata());
  for (size_t i = 0; i < file->tensors().size(); ++i) {
    const llmft::io::SafetensorsEntry& entry = header->entries()[i];
    const llmft::io::SafeTensor& tensor = file->tensors()[i];
    FUZZ_CHECK(entry.name == tensor.name && entry.dtype == tensor.dtype);
    FUZZ_CHECK(entry.shape == tensor.shape && entry.bytes == tensor.bytes.size());
    FUZZ_CHECK(entry.file_offset >= header->header_bytes());
    FUZZ_CHECK(entry.file_offset + entry.bytes <= size);
    size_t numel = 1;
    for (int64_t dim : tensor.shape) numel *= static_cast<size_t>(dim);
    FUZZ_CHECK(numel * llmft::io::safetensors_dtype_size(tensor.dtype) == tensor.bytes.size());
    FUZZ_CHECK(header->find(entry.name) != nullptr && file->find(tensor.name) != nullptr);
  }
  return 0;
}
