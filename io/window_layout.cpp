#include "io/window_layout.h"

#include <algorithm>

#include "core/error.h"

namespace llmft::io {
namespace {

// (size - 1) / seq_len, or an Error when that is 0.
size_t count_stream_windows(const TokenFile& file, int seq_len) {
  const size_t windows = file.size() == 0 ? 0 : (file.size() - 1) / seq_len;
  LLMFT_REQUIRE(windows > 0, "token file '" << file.path() << "' has " << file.size()
                                            << " tokens, too few for one training window of "
                                               "seq_len "
                                            << seq_len << " (which needs " << seq_len + 1
                                            << "); use a shorter --seq-len or more data");
  return windows;
}

// Throws naming the file when none of the targets of its `windows` windows of seq_len,
// tokens [1, windows * seq_len + 1), is a training target. Counts the targets outside
// that range (at most seq_len tokens), not the many inside it.
void require_stream_targets(const TokenFile& file, size_t windows, int seq_len) {
  const size_t end = windows * seq_len + 1;
  std::vector<uint8_t> outside(file.size() - end);
  file.copy_loss_mask(end, outside.size(), outside.data());
  const size_t targets_outside = (file.is_target(0) ? 1 : 0) +
                                 static_cast<size_t>(std::count(outside.begin(), outside.end(), 1));
  if (file.target_count() > targets_outside) return;
  LLMFT_REQUIRE(file.target_count() > 0,
                "token file '" << file.path() << "' has no training target: its loss mask marks "
                               << "every token as a prompt token, so there is nothing to train "
                               << "on; give the dataset responses and re-run `llmft prepare`");
  LLMFT_FAIL("token file '" << file.path() << "' has no training target inside its windows of "
                            << "seq_len " << seq_len << " (tokens 1 to " << end - 1
                            << "): its loss mask marks them all as prompt tokens; use a shorter "
                            << "--seq-len or more data");
}

// Copies `count` tokens from `first` and their targets (the next `count` tokens, masked
// where the loss mask says so or at and past `end`, the end of their sample) into row
// positions [0, count) of `inputs` and `targets`.
void copy_span(const TokenFile& file, size_t first, size_t count, size_t end, int32_t* inputs,
               int32_t* targets) {
  file.copy(first, count, inputs);
  const size_t with_targets = std::min(count, end - first - 1);
  file.copy(first + 1, with_targets, targets);
  std::fill(targets + with_targets, targets + count, kMaskedTarget);
  if (!file.has_loss_mask()) return;
  std::vector<uint8_t> is_target(with_targets);
  file.copy_loss_mask(first + 1, with_targets, is_target.data());
  for (size_t t = 0; t < with_targets; ++t) {
    if (is_target[t] == 0) targets[t] = kMaskedTarget;
  }
}

}  // namespace

WindowLayout::WindowLayout(const TokenFile& file, int seq_len) : file_(file), seq_len_(seq_len) {
  LLMFT_REQUIRE(seq_len > 0, "seq_len must be positive, got " << seq_len);
  if (packed()) {
    pack_samples();
    return;
  }
  stream_windows_ = count_stream_windows(file, seq_len);
  require_stream_targets(file, stream_windows_, seq_len);
}

size_t WindowLayout::sample_end(size_t i) const {
  const std::vector<uint64_t>& starts = file_.sample_starts();
  return i + 1 < starts.size() ? starts[i + 1] : file_.size();
}

void WindowLayout::pack_samples() {
  const std::vector<uint64_t>& starts = file_.sample_starts();
  const size_t seq_len = static_cast<size_t>(seq_len_);
  packing_.samples = starts.size();
  window_first_.push_back(0);
  size_t filled = 0;
  std::vector<uint8_t> mask;
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t length = sample_end(i) - starts[i];
    const size_t kept = std::min(length, seq_len);
    // The targets of the kept tokens are tokens 1 .. min(kept, length - 1) of the sample.
    mask.resize(std::min(kept, length - 1));
    file_.copy_loss_mask(starts[i] + 1, mask.size(), mask.data());
    if (std::count(mask.begin(), mask.end(), 1) == 0) {
      ++packing_.dropped;
      continue;
    }
    if (length > seq_len) ++packing_.truncated;
    if (filled + kept > seq_len) {
      packing_.padding += seq_len - filled;
      window_first_.push_back(kept_.size());
      filled = 0;
    }
    kept_.push_back(i);
    filled += kept;
  }
  LLMFT_REQUIRE(!kept_.empty(), "token file '" << file_.path() << "' has " << starts.size()
                                               << " samples but none with a training target in "
                                                  "its first "
                                               << seq_len
                                               << " tokens (each is all prompt, or one token); "
                                                  "give the dataset responses or a longer "
                                                  "--seq-len");
  packing_.padding += seq_len - filled;
  window_first_.push_back(kept_.size());
}

std::string WindowLayout::describe_packing() const {
  if (!packed()) return "";
  std::string text = " packed from " + std::to_string(packing_.samples) + " samples";
  if (packing_.truncated + packing_.dropped > 0) {
    text += " (" + std::to_string(packing_.truncated) + " cut to --seq-len, " +
            std::to_string(packing_.dropped) + " dropped: no target left)";
  }
  const double positions = static_cast<double>(num_windows()) * seq_len_;
  const int padding =
      static_cast<int>(100.0 * static_cast<double>(packing_.padding) / positions + 0.5);
  return text + ", " + std::to_string(padding) + "% padding";
}

Batch WindowLayout::empty_batch(int rows) const {
  Batch batch;
  batch.batch = rows;
  batch.seq_len = seq_len_;
  const size_t size = static_cast<size_t>(rows) * seq_len_;
  batch.inputs.resize(size);
  batch.targets.resize(size);
  if (packed()) batch.positions.resize(size);
  return batch;
}

void WindowLayout::fill_row(size_t window, int row, Batch& batch) const {
  if (packed()) {
    fill_packed_row(window, row, batch);
  } else {
    fill_stream_row(window, row, batch);
  }
}

void WindowLayout::fill_stream_row(size_t window, int row, Batch& batch) const {
  const size_t seq_len = static_cast<size_t>(seq_len_), first = window * seq_len;
  copy_span(file_, first, seq_len, file_.size(), batch.inputs.data() + row * seq_len,
            batch.targets.data() + row * seq_len);
}

void WindowLayout::fill_packed_row(size_t window, int row, Batch& batch) const {
  const size_t seq_len = static_cast<size_t>(seq_len_);
  int32_t* inputs = batch.inputs.data() + row * seq_len;
  int32_t* targets = batch.targets.data() + row * seq_len;
  int32_t* positions = batch.positions.data() + row * seq_len;
  size_t filled = 0;
  for (size_t k = window_first_[window]; k < window_first_[window + 1]; ++k) {
    const size_t i = kept_[k], first = file_.sample_starts()[i], end = sample_end(i);
    const size_t count = std::min(end - first, seq_len);
    copy_span(file_, first, count, end, inputs + filled, targets + filled);
    for (size_t t = 0; t < count; ++t) positions[filled + t] = static_cast<int32_t>(t);
    filled += count;
  }
  for (size_t t = filled; t < seq_len; ++t) {
    inputs[t] = 0;
    targets[t] = kMaskedTarget;
    positions[t] = static_cast<int32_t>(t - filled);
  }
}

}  // namespace llmft::io
