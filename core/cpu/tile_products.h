// Small matrix products for the CPU attention's tiles, whose operands sit in cache:
// register-blocked, with no packing. OpenBLAS packs both operands of every call, which for
// attention's 64-deep products over 128-row tiles cost about a third of its kernel's time
// (docs/BENCHMARKS.md); here the caller lays out only what the tiles need in cache-friendly
// order (transpose_panels), once for all the tiles that take it.
#pragma once

#include <cstdint>

namespace llmft::cpu {

// c(m x width, rows ldc apart) = alpha * A B, or c += alpha * A B when `accumulate`, where
// A(i, k) = a[i * a_row + k * a_col] (so A may be read transposed) for k < depth, and row k
// of B (width floats) starts at b + k * ldb. Every element sums its terms in a fixed order
// (depth blocks upwards, k upwards within one), so the result depends on the shapes alone.
struct TileProduct {
  float* c;
  int64_t ldc;
  const float* a;
  int64_t a_row, a_col;
  const float* b;
  int64_t ldb;
  int64_t m, width, depth;
  float alpha;
  bool accumulate;
};
void tile_product(const TileProduct& p);

// The columns a register tile spans: what transpose_panels cuts its output into.
int64_t tile_panel_width();

// x(rows x cols, rows ld apart) transposed into panels of tile_panel_width() columns of the
// transpose (the last one narrower), each panel cols x its width, stored one after another:
// panel j holds x's rows j * width .. as columns. Product c = A x^T then runs panel by panel
// with b = the panel and ldb = its width (transposed_product).
void transpose_panels(float* out, const float* x, int64_t rows, int64_t cols, int64_t ld);

// c(m x rows, rows ldc apart) = alpha * A x^T (+ c when accumulating) for the first `rows`
// rows of x (x: panel_rows x depth, panel_rows >= rows), given x's transpose_panels; A as
// in TileProduct. Panels of a longer x serve any run of its rows that starts at a panel
// boundary: pass the panels from that row on and the rows left from there.
void transposed_product(float* c, int64_t ldc, const float* a, int64_t a_row, int64_t a_col,
                        const float* panels, int64_t panel_rows, int64_t m, int64_t rows,
                        int64_t depth, float alpha, bool accumulate);

}  // namespace llmft::cpu
