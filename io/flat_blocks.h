// Flat element ranges of a row-major tensor as rectangular blocks: the unit in which a
// checkpoint file is read and written (io/hdf5_file.h). HDF5 maps a selection to its
// chunks quickly only when the memory holds it in the same shape as the file, so each
// block is transferred on its own, its elements packed row by row. A range becomes a
// partial first row, whole rows and a partial last row; consecutive blocks that continue
// one another (the next rows of the same columns, or the next columns of one row) merge,
// so a whole tensor, a run of whole rows, and a column slice (one run per row, as
// tensor parallelism cuts a matrix by columns) are one block each.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace llmft::io {

// Elements [begin, end) of a tensor in row-major order.
struct FlatRange {
  int64_t begin = 0;
  int64_t end = 0;
};

// rows x cols elements from (row, col); a 1-D tensor is one row.
struct Block {
  int64_t row = 0;
  int64_t col = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t elements() const { return rows * cols; }
};

// The blocks of `ranges` (sorted, disjoint, inside a tensor of `shape`, 1 or 2 dimensions)
// in the order of their elements.
std::vector<Block> flat_blocks(const std::vector<FlatRange>& ranges, const Shape& shape);

}  // namespace llmft::io
