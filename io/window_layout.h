// How a token file is cut into training windows of seq_len input positions.
//
// A continuous stream (a file without samples: plain text) is cut every seq_len tokens:
// window w covers tokens [w*seq_len, w*seq_len + seq_len + 1), its inputs the first
// seq_len of them and its targets the last seq_len, so consecutive windows share one token
// and a file of `size` tokens has (size - 1) / seq_len windows.
//
// Samples (JSONL rows, conversations: io/token_file.h) are packed whole into windows, in
// file order, next fit: a window takes the next sample while it fits in what is left of
// seq_len, and closes otherwise. Inside a window every token's position is its index in
// its sample, so no token attends to another sample (core/backend.h); the target of a
// sample's last token is masked (the next token is another sample's), and the positions
// after the last sample are padding (token 0, masked, a sample of their own). A sample
// longer than seq_len is truncated to its first seq_len tokens (its prompt comes first, so
// a response is never trained without it; the target of the last kept token is still the
// sample's next token); a sample with no training target in what is kept (a prompt alone,
// or one token) is dropped. Both are counted.
//
// Targets that the file's loss mask marks as not training targets are kMaskedTarget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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
  // For packed samples, every token's position within its sample; empty for a stream.
  std::vector<int32_t> positions;
};

// What packing did with a file's samples.
struct PackingStats {
  size_t samples = 0;    // in the file
  size_t truncated = 0;  // longer than seq_len, cut to its first seq_len tokens
  size_t dropped = 0;    // no training target in what is kept
  size_t padding = 0;    // positions left empty at the ends of windows
};

class WindowLayout {
 public:
  // Keeps a reference to `file`, which must outlive the layout. Throws llmft::Error naming
  // the file when it has no window of seq_len (too short a stream, every sample dropped)
  // or no training target inside its windows.
  // REQUIRES: seq_len > 0.
  WindowLayout(const TokenFile& file, int seq_len);

  size_t num_windows() const { return packed() ? window_first_.size() - 1 : stream_windows_; }
  int seq_len() const { return seq_len_; }
  // Whether the file's samples are packed (else it is one stream).
  bool packed() const { return !file_.sample_starts().empty(); }
  const PackingStats& packing() const { return packing_; }
  // How the windows were made, for the data line: "" for a stream, else e.g.
  // " packed from 267 samples (2 cut to --seq-len, 1 dropped: no target left), 9% padding".
  std::string describe_packing() const;

  // Window `window` into row `row` of `batch` (sized for seq_len rows; positions sized too
  // when packed). REQUIRES: window < num_windows(), row < batch.batch.
  void fill_row(size_t window, int row, Batch& batch) const;
  // An empty batch of `rows` rows for these windows.
  Batch empty_batch(int rows) const;

 private:
  void pack_samples();
  void fill_stream_row(size_t window, int row, Batch& batch) const;
  void fill_packed_row(size_t window, int row, Batch& batch) const;
  // Tokens of sample i: [start, end).
  size_t sample_end(size_t i) const;

  const TokenFile& file_;
  int seq_len_;
  size_t stream_windows_ = 0;
  std::vector<size_t> kept_;          // the samples packed, in file order
  std::vector<size_t> window_first_;  // window w packs kept_[window_first_[w] .. [w + 1])
  PackingStats packing_;
};

}  // namespace llmft::io
