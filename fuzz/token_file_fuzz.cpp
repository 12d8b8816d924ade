// Fuzz target: TokenFile on arbitrary bytes. llmft::Error is the expected answer to a bad
// file; an accepted file must give tokens and a loss mask consistent with its header.
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
    size_t targets = 0;
    for (size_t i = 0; i < file.size(); ++i) {
      FUZZ_CHECK(file[i] == tokens[i]);
      targets += file.is_target(i) ? 1 : 0;
    }
    FUZZ_CHECK(targets == file.target_count());
    FUZZ_CHECK(file.has_loss_mask() || targets == file.size());
  } catch (const llmft::Error&) {
  }
  return 0;
}
