// Training and evaluation batches cut from a token file as windows (io/window_layout.h:
// a stream cut every seq_len tokens, or samples packed whole into windows).
//
// DataLoader serves the windows of each optimizer step's global batch from a stream: the
// stream is epoch 0's permutation of all windows, then epoch 1's, and so on, each a
// seeded shuffle that depends only on the seed and the epoch (std::mt19937_64 and our own
// Fisher-Yates, nothing implementation-defined). Step s (1-based) of a global batch of G
// windows takes stream positions [(s - 1) G, s G): a pure function of (seed, G, s), the
// same on every rank, build and platform whatever the layout cuts the batch into
// (io/batch_cut.h), and the same for a run started at step s as for one that got there.
// A global batch that crosses the end of an epoch takes that epoch's last windows and
// then the next epoch's first ones (so a batch can hold one window twice only when G
// exceeds the number of windows). A DataLoader is not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/micro_batch.h"
#include "io/token_file.h"
#include "io/window_layout.h"

namespace llmft::io {

class DataLoader {
 public:
  // Keeps a reference to `file`, which must outlive the loader. Throws llmft::Error as
  // WindowLayout does (a window with no target is fine: a step's loss is the mean over
  // all of its targets).
  // REQUIRES: seq_len > 0.
  DataLoader(const TokenFile& file, int seq_len, uint64_t seed);

  size_t num_windows() const { return num_windows_; }
  const WindowLayout& layout() const { return layout_; }

  // The windows (indices into the file's windows) of step `step`'s global batch of
  // `global_windows`, in stream order. REQUIRES: step >= 1, global_windows > 0.
  std::vector<size_t> global_batch(int64_t step, int global_windows);
  // The `count` windows at stream positions [first_position, first_position + count): a
  // run resumed from a checkpoint continues at the position it had consumed.
  // REQUIRES: first_position >= 0, count > 0.
  std::vector<size_t> windows_at(int64_t first_position, int count);
  // The epoch that stream position `position` belongs to.
  int64_t epoch_of(int64_t position) const;

  // windows[first, first + count) as a batch.
  // REQUIRES: first >= 0, count >= 0, first + count <= windows.size().
  Batch rows(const std::vector<size_t>& windows, int first, int count) const;

 private:
  // Epoch `epoch`'s permutation of the windows (the last one computed is kept).
  const std::vector<size_t>& order_of(int64_t epoch);

  WindowLayout layout_;
  uint64_t seed_;
  size_t num_windows_;
  int64_t cached_epoch_ = -1;
  std::vector<size_t> cached_order_;
};

// Deterministic evaluation windows in file order: the first
// min(max_windows, number of windows) windows, in batches of at most micro_batch.
// Throws llmft::Error naming the file, as DataLoader does, when it is too short for one
// window or no window has a training target. A batch may still have every target
// masked, so average the loss over the targets of all batches, not batch by batch.
// REQUIRES: seq_len > 0, micro_batch > 0, max_windows > 0.
std::vector<Batch> evaluation_batches(const TokenFile& file, int seq_len, int micro_batch,
                                      int max_windows);

// Views of `batches` for the engine (valid while the batches live).
std::vector<MicroBatch> micro_batch_views(const std::vector<Batch>& batches);

}  // namespace llmft::io
