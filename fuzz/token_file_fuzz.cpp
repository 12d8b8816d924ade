// Fuzz target: TokenFile on arbitrary bytes. llmft::Error is the expected answer to a bad
// file; an accepted file must give ids inside its vocabulary and a loss mask consistent
// with its header.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "fuzz/check.h"
#include "fuzz/scratch_dir.h"
#include "io/token_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = llmft::fuzz::ScratchDir::get().write("tokens.bin", data, size);
  try {
    const llmft::io::TokenFile file(path);
    FUZZ_CHECK(file.vocab_size() > 0);
    std::vector<int32_t> tokens(file.size());
    file.copy(0, file.size(), tokens.data());
    std::vector<uint8_t> mask(file.size());
    file.copy_loss_mask(0, file.size(), mask.data());
    size_t targets = 0;
    for (size_t i = 0; i < file.size(); ++i) {
      FUZZ_CHECK(tokens[i] >= 0 && tokens[i] < file.vocab_size());
      FUZZ_CHECK(file[i] == tokens[i]);
      FUZZ_CHECK(file.is_target(i) == (mask[i] == 1));
      targets += mask[i];
    }
    FUZZ_CHECK(targets == file.target_count());
    FUZZ_CHECK(file.has_loss_mask() || targets == file.size());
  } catch (const llmft::Error&) {
  }
  return 0;
}
