// Training and evaluation batches cut from a token file as fixed-length windows.
//
// Window w covers tokens [w*seq_len, w*seq_len + seq_len + 1): its inputs are the
// first seq_len of them and its targets the last seq_len (the inputs shifted by one),
// so consecutive windows share one token and a file of `size` tokens has
// (size - 1) / seq_len windows. A target whose token the file's loss mask marks as not
// a training target (a prompt token) is kMaskedTarget instead of the token: the loss
// is the mean over the targets >= 0 only.
//
// DataLoader walks the windows in a seeded shuffled order, reshuffled each epoch. The
// order depends only on the seed and the epoch (std::mt19937_64 and our own
// Fisher-Yates, nothing implementation-defined), so every rank, build and platform
// draws the same stream. A DataLoader is not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/token_file.h"

namespace llmft::io {

// The target of an input position whose next token is not a training target.
constexpr int32_t kMaskedTarget = -1;

// `batch` rows of `seq_len` tokens, row-major (batch, seq_len).
struct Batch {
  int batch = 0;
  int seq_len = 0;
  std::vector<int32_t> inputs;
  // targets[r*seq_len + t] is the token that follows inputs[r*seq_len + t], or
  // kMaskedTarget when that token is not a training target.
  std::vector<int32_t> targets;
};

class DataLoader {
 public:
  // Keeps a reference to `file`, which must outlive the loader. Throws llmft::Error
  // naming the file when it is too short for one window of seq_len, or when no window
  // has a training target (a window with none is fine: a step's loss is the mean over
  // all of its targets).
  // REQUIRES: seq_len > 0.
  DataLoader(const TokenFile& file, int seq_len, uint64_t seed);

  size_t num_windows() const { return order_.size(); }

  // Draws the next `global_windows` windows of the shuffled stream (reshuffling with
  // a new epoch seed when the stream runs out) and returns windows
  // [first, first + count) of them. Every rank calls it with the same global_windows,
  // so data-parallel ranks get disjoint parts of one global batch.
  // REQUIRES: global_windows > 0, first >= 0, count >= 0, first + count <= global_windows.
  Batch next(int global_windows, int first, int count);

  // The epoch of the most recently drawn window, counting from 0.
  int epoch() const { return epoch_; }

 private:
  void shuffle_for_epoch();

  const TokenFile& file_;
  int seq_len_;
  uint64_t seed_;
  int epoch_ = 0;
  std::vector<size_t> order_;  // window indices in this epoch's order
  size_t position_ = 0;        // next entry of order_ to draw
};

// Deterministic evaluation windows in file order: the first
// min(max_windows, number of windows) windows, in batches of at most micro_batch.
// Throws llmft::Error naming the file, as DataLoader does, when it is too short for one
// window or no window has a training target. A batch may still have every target
// masked, so average the loss over the targets of all batches, not batch by batch.
// REQUIRES: seq_len > 0, micro_batch > 0, max_windows > 0.
std::vector<Batch> evaluation_batches(const TokenFile& file, int seq_len, int micro_batch,
                                      int max_windows);

}  // namespace llmft::io
