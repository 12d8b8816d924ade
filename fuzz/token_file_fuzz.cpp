// Fuzz target: TokenFile on arbitrary bytes. llmft::Error is the expected answer to a bad
// file; an accepted file must give ids inside its vocabulary, a loss mask consistent with
// its header and rising sample starts inside it, and its windows (io/window_layout.h) at a
// few lengths must hold its own tokens, positions inside the window and targets that are
// tokens or masked.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "fuzz/check.h"
#include "fuzz/scratch_dir.h"
#include "io/token_file.h"
#include "io/window_layout.h"

namespace {

// The first windows of `file` at seq_len, when it has any, hold what the header promises.
void check_windows(const llmft::io::TokenFile& file, int seq_len) {
  try {
    const llmft::io::WindowLayout layout(file, seq_len);
    llmft::io::Batch batch = layout.empty_batch(1);
    for (size_t w = 0; w < layout.num_windows() && w < 4; ++w) {
      layout.fill_row(w, 0, batch);
      for (int t = 0; t < seq_len; ++t) {
        FUZZ_CHECK(batch.inputs[t] >= 0 && batch.inputs[t] < file.vocab_size());
        FUZZ_CHECK(batch.targets[t] == llmft::io::kMaskedTarget ||
                   (batch.targets[t] >= 0 && batch.targets[t] < file.vocab_size()));
        if (layout.packed()) FUZZ_CHECK(batch.positions[t] >= 0 && batch.positions[t] <= t);
      }
    }
  } catch (const llmft::Error&) {
  }
}

}  // namespace

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
    const std::vector<uint64_t>& starts = file.sample_starts();
    for (size_t i = 0; i < starts.size(); ++i) {
      FUZZ_CHECK(starts[i] < file.size() && (i == 0 ? starts[i] == 0 : starts[i] > starts[i - 1]));
    }
    for (const int seq_len : {1, 3, 64}) check_windows(file, seq_len);
  } catch (const llmft::Error&) {
  }
  return 0;
}
