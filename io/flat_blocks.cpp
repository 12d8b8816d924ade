#include "io/flat_blocks.h"

#include <algorithm>

namespace llmft::io {
namespace {

// Appends `b`, merged into the last block when it continues it.
void append(std::vector<Block>& blocks, const Block& b) {
  if (b.elements() == 0) return;
  if (!blocks.empty()) {
    Block& last = blocks.back();
    if (b.col == last.col && b.cols == last.cols && b.row == last.row + last.rows) {
      last.rows += b.rows;  // the next rows of the same columns
      return;
    }
    if (last.rows == 1 && b.rows == 1 && b.row == last.row && b.col == last.col + last.cols) {
      last.cols += b.cols;  // the next columns of one row
      return;
    }
  }
  blocks.push_back(b);
}

}  // namespace

std::vector<Block> flat_blocks(const std::vector<FlatRange>& ranges, const Shape& shape) {
  const int64_t cols = shape.back();
  std::vector<Block> blocks;
  for (const FlatRange& r : ranges) {
    int64_t begin = r.begin;
    if (begin % cols != 0) {  // the partial first row
      const int64_t stop = std::min(r.end, (begin / cols + 1) * cols);
      append(blocks, {begin / cols, begin % cols, 1, stop - begin});
      begin = stop;
    }
    const int64_t whole_rows = (r.end - begin) / cols;
    append(blocks, {begin / cols, 0, whole_rows, cols});
    begin += whole_rows * cols;
    append(blocks, {begin / cols, 0, 1, r.end - begin});  // the partial last row
  }
  return blocks;
}

}  // namespace llmft::io
