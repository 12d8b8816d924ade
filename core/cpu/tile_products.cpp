// Register-blocked tile products (tile_products.h): tiles of kTileRows rows of c by
// kTileVectors of the target's vectors, each row's A value broadcast against B's row
// vectors; B's rows are walked in depth blocks that stay in L1 while every row tile of a
// column block passes over them.
#include "core/cpu/tile_products.h"

#include <algorithm>
#include <utility>

namespace llmft::cpu {

namespace {

// The target's vectors (CMakeLists.txt decides): 16 floats with AVX-512's 32 registers,
// a tile of 4 of them a row (24 sums, 4 B vectors and a broadcast); 8 floats elsewhere,
// 2 a row in 16 registers. (Vectors wider than the target's are emulated through memory.)
constexpr int kLanes = LLMFT_VECTOR_FLOATS;
constexpr int kTileVectors = kLanes == 16 ? 4 : 2;
constexpr int kTileRows = 6;
typedef float Vec __attribute__((vector_size(sizeof(float) * kLanes)));
// A column block's rows of B over one depth block fill 32 KiB, which stays in L1.
constexpr int64_t kDepthBlock = 8192 / (kTileVectors * kLanes);

// The same vector at any float's address (the tiles' rows start anywhere).
typedef float UnalignedVec
    __attribute__((vector_size(sizeof(float) * kLanes), aligned(4), may_alias));
inline const UnalignedVec& vector_at(const float* p) {
  return *reinterpret_cast<const UnalignedVec*>(p);
}
inline UnalignedVec& vector_at(float* p) {
  return *reinterpret_cast<UnalignedVec*>(p);
}

// Rows i0 .. i0 + MR - 1, columns j0 .. j0 + NV kLanes - 1 of c over depth k0 .. k1 - 1.
template <int MR, int NV>
void register_tile(const TileProduct& p, int64_t i0, int64_t j0, int64_t k0, int64_t k1,
                   bool accumulate) {
  Vec sums[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) sums[i][v] = Vec{};
  }
  const float* a = p.a + i0 * p.a_row;
  for (int64_t k = k0; k < k1; ++k) {
    const float* b_row = p.b + k * p.ldb + j0;
    Vec b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = vector_at(b_row + v * kLanes);
    const float* a_k = a + k * p.a_col;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const float a_ik = a_k[i * p.a_row];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) sums[i][v] += a_ik * b[v];
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* c_row = p.c + (i0 + i) * p.ldc + j0;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      Vec result = p.alpha * sums[i][v];
      if (accumulate) result += vector_at(c_row + v * kLanes);
      vector_at(c_row + v * kLanes) = result;
    }
  }
}

// The last `rows` rows of a column block (fewer than MR + 1), from row i0: one tile of
// exactly that many rows.
template <int MR, int NV>
void last_rows(const TileProduct& p, int64_t rows, int64_t i0, int64_t j0, int64_t k0, int64_t k1,
               bool accumulate) {
  if constexpr (MR > 0) {
    if (rows == MR) {
      register_tile<MR, NV>(p, i0, j0, k0, k1, accumulate);
      return;
    }
    last_rows<MR - 1, NV>(p, rows, i0, j0, k0, k1, accumulate);
  }
}

// Every row of c for one column block of NV vectors from column j0.
template <int NV>
void column_block(const TileProduct& p, int64_t j0, int64_t k0, int64_t k1, bool accumulate) {
  int64_t i = 0;
  for (; i + kTileRows <= p.m; i += kTileRows) {
    register_tile<kTileRows, NV>(p, i, j0, k0, k1, accumulate);
  }
  last_rows<kTileRows - 1, NV>(p, p.m - i, i, j0, k0, k1, accumulate);
}

// The columns from j0 to the end, fewer than one vector, element by element.
void narrow_columns(const TileProduct& p, int64_t j0, int64_t k0, int64_t k1, bool accumulate) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = j0; j < p.width; ++j) {
      float sum = 0.0f;
      for (int64_t k = k0; k < k1; ++k) sum += p.a[i * p.a_row + k * p.a_col] * p.b[k * p.ldb + j];
      float& out = p.c[i * p.ldc + j];
      out = accumulate ? out + p.alpha * sum : p.alpha * sum;
    }
  }
}

typedef int32_t Lanes __attribute__((vector_size(sizeof(int32_t) * kLanes)));

// The lane choices of a transpose round that swaps blocks of S (lane kLanes + l is lane l of
// the second row): the upper row keeps its lanes outside the blocks and takes the lower
// row's, the lower row the other way round.
template <int S, typename Lane>
struct RoundLanes;
template <int S, int... L>
struct RoundLanes<S, std::integer_sequence<int, L...>> {
  static constexpr Lanes upper{((L & S) ? kLanes + L - S : L)...};
  static constexpr Lanes lower{((L & S) ? kLanes + L : L + S)...};
};

template <int S>
inline void transpose_round(Vec* rows) {
  using Round = RoundLanes<S, std::make_integer_sequence<int, kLanes>>;
#pragma GCC unroll 16
  for (int r = 0; r < kLanes; ++r) {
    if (r & S) continue;
    const Vec a = rows[r], b = rows[r + S];
    rows[r] = __builtin_shuffle(a, b, Round::upper);
    rows[r + S] = __builtin_shuffle(a, b, Round::lower);
  }
}

// Rounds S, S / 2, ..., 1.
template <int S>
inline void transpose_rounds(Vec* rows) {
  transpose_round<S>(rows);
  if constexpr (S > 1) transpose_rounds<S / 2>(rows);
}

// out (kLanes x kLanes, rows ldo apart) = x (rows ldx apart) transposed, in registers:
// rounds that swap the off-diagonal blocks of kLanes / 2, ..., 2 and 1 rows and columns.
inline void transpose_square(float* out, int64_t ldo, const float* x, int64_t ldx) {
  Vec rows[kLanes];
#pragma GCC unroll 16
  for (int r = 0; r < kLanes; ++r) rows[r] = vector_at(x + r * ldx);
  transpose_rounds<kLanes / 2>(rows);
#pragma GCC unroll 16
  for (int r = 0; r < kLanes; ++r) vector_at(out + r * ldo) = rows[r];
}

}  // namespace

void tile_product(const TileProduct& p) {
  for (int64_t k0 = 0; k0 < p.depth || k0 == 0; k0 += kDepthBlock) {
    const int64_t k1 = std::min(p.depth, k0 + kDepthBlock);
    const bool accumulate = p.accumulate || k0 > 0;
    int64_t j = 0;
    for (; j + kTileVectors * kLanes <= p.width; j += kTileVectors * kLanes) {
      column_block<kTileVectors>(p, j, k0, k1, accumulate);
    }
    for (; j + kLanes <= p.width; j += kLanes) column_block<1>(p, j, k0, k1, accumulate);
    narrow_columns(p, j, k0, k1, accumulate);
  }
}

int64_t tile_panel_width() {
  return kTileVectors * kLanes;
}

void transpose_panels(float* out, const float* x, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t panel = tile_panel_width();
  for (int64_t j0 = 0; j0 < rows; j0 += panel) {
    const int64_t width = std::min(panel, rows - j0);
    float* block = out + j0 * cols;
    int64_t j = 0, d = 0;
    for (; j + kLanes <= width; j += kLanes) {
      for (d = 0; d + kLanes <= cols; d += kLanes) {
        transpose_square(block + d * width + j, width, x + (j0 + j) * ld + d, ld);
      }
    }
    // What the squares left: the panel's last columns, and the rows past the last
    // whole square in every column.
    for (int64_t jj = 0; jj < width; ++jj) {
      const float* row = x + (j0 + jj) * ld;
      for (int64_t dd = jj < j ? d : 0; dd < cols; ++dd) block[dd * width + jj] = row[dd];
    }
  }
}

void transposed_product(float* c, int64_t ldc, const float* a, int64_t a_row, int64_t a_col,
                        const float* panels, int64_t panel_rows, int64_t m, int64_t rows,
                        int64_t depth, float alpha, bool accumulate) {
  const int64_t panel = tile_panel_width();
  for (int64_t j0 = 0; j0 < rows; j0 += panel) {
    const int64_t stored = std::min(panel, panel_rows - j0);
    tile_product({c + j0, ldc, a, a_row, a_col, panels + j0 * depth, stored, m,
                  std::min(panel, rows - j0), depth, alpha, accumulate});
  }
}

}  // namespace llmft::cpu
