// io/flat_blocks.h: flat ranges as rectangles, checked against the elements they cover.
#include "io/flat_blocks.h"

#include <doctest/doctest.h>

#include <vector>

using namespace llmft;
using namespace llmft::io;

namespace {

// The flat indices the blocks cover, in block order, row by row.
std::vector<int64_t> covered(const std::vector<Block>& blocks, int64_t cols) {
  std::vector<int64_t> out;
  for (const Block& b : blocks) {
    for (int64_t r = b.row; r < b.row + b.rows; ++r) {
      for (int64_t c = b.col; c < b.col + b.cols; ++c) out.push_back(r * cols + c);
    }
  }
  return out;
}

std::vector<int64_t> listed(const std::vector<FlatRange>& ranges) {
  std::vector<int64_t> out;
  for (const FlatRange& r : ranges) {
    for (int64_t i = r.begin; i < r.end; ++i) out.push_back(i);
  }
  return out;
}

}  // namespace

TEST_CASE("flat ranges become the fewest blocks that keep their order") {
  const Shape matrix{6, 8};
  SUBCASE("a whole tensor and runs of whole rows are one block") {
    CHECK(flat_blocks({{0, 48}}, matrix).size() == 1);
    CHECK(flat_blocks({{8, 24}, {24, 40}}, matrix).size() == 1);
  }
  SUBCASE("a column slice, one run per row, is one block") {
    std::vector<FlatRange> columns;
    for (int64_t row = 0; row < 6; ++row) columns.push_back({row * 8 + 2, row * 8 + 5});
    const std::vector<Block> blocks = flat_blocks(columns, matrix);
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0].row == 0);
    CHECK(blocks[0].col == 2);
    CHECK(blocks[0].rows == 6);
    CHECK(blocks[0].cols == 3);
    CHECK(covered(blocks, 8) == listed(columns));
  }
  SUBCASE("a shard starting and ending mid-row: partial row, whole rows, partial row") {
    const std::vector<FlatRange> shard{{5, 43}};
    const std::vector<Block> blocks = flat_blocks(shard, matrix);
    CHECK(blocks.size() == 3);
    CHECK(covered(blocks, 8) == listed(shard));
  }
  SUBCASE("separate sections (q | k | v rows) stay separate blocks") {
    const std::vector<FlatRange> sections{{0, 8}, {16, 24}, {32, 40}};
    const std::vector<Block> blocks = flat_blocks(sections, matrix);
    CHECK(blocks.size() == 3);
    CHECK(covered(blocks, 8) == listed(sections));
  }
  SUBCASE("a vector: adjacent ranges join") {
    const std::vector<FlatRange> pieces{{3, 7}, {7, 12}, {20, 25}};
    const std::vector<Block> blocks = flat_blocks(pieces, Shape{30});
    CHECK(blocks.size() == 2);
    CHECK(covered(blocks, 30) == listed(pieces));
  }
  SUBCASE("no ranges: no blocks") {
    CHECK(flat_blocks({}, matrix).empty());
  }
}
