// Memory-light causal self-attention on CPU, blocked like flash attention (docs/
// ARCHITECTURE.md, "CPU attention"). Queries and keys are cut into tiles; every tile
// product is one OpenBLAS sgemm on rows read in place from the packed qkv (its row stride
// is the leading dimension), with the query rows of all heads that share a key/value head
// stacked into one tall tile so that GQA reads each key/value tile once. Forward keeps an
// online softmax per query row and only the row's log-sum-exp; backward recomputes the
// probabilities from q, k and the log-sum-exp, so no (B, H, T, T) tensor exists. Key tiles
// wholly above the diagonal are skipped.
//
// Every output element is written by one task in a fixed order, so results depend neither
// on the thread count nor on the schedule: forward tasks are (batch, key/value head, query
// tile); backward runs a pass of (batch, key/value head, key tile) tasks for dK and dV and
// a pass of (batch, key/value head, query tile) tasks for dQ, recomputing the tile
// products each needs (no atomics, no per-thread partial sums). OpenBLAS runs
// single-threaded inside the parallel region.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/vector_math.h"

namespace llmft::cpu {

namespace {

constexpr int64_t kQueryTile = 64;
constexpr int64_t kKeyTile = 64;
constexpr float kMasked = -std::numeric_limits<float>::infinity();

// One token's packed qkv row of width (H + 2 KVH) D; `rows` rows per batch.
struct QkvLayout {
  int64_t rows, H, KVH, D, width;
  const float* q(const float* qkv, int64_t b, int64_t t, int64_t h) const {
    return qkv + (b * rows + t) * width + h * D;
  }
  const float* k(const float* qkv, int64_t b, int64_t t, int64_t g) const {
    return qkv + (b * rows + t) * width + (H + g) * D;
  }
  const float* v(const float* qkv, int64_t b, int64_t t, int64_t g) const {
    return qkv + (b * rows + t) * width + (H + KVH + g) * D;
  }
};

// The query rows one task stacks: `count` queries from `first` (row indices of qkv) for
// each of the `group` heads of one key/value head, head-major: stacked row r is query
// first + r % count of head h0 + r / count.
struct QueryTile {
  int64_t first, count, h0, group;
  int64_t rows() const { return count * group; }
  int64_t query(int64_t r) const { return first + r % count; }
  int64_t head(int64_t r) const { return h0 + r / count; }
};

// A thread's scratch, kept across calls (sized by the largest tile seen).
struct Scratch {
  std::vector<float> q, dout, acc, scores, probs, stat_a, stat_b;
  float* get(std::vector<float>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
    return v.data();
  }
};
thread_local Scratch scratch;

// Copies the stacked rows of `tile` of one (batch, head-offset) source into `out`
// (rows x D): `row(query, head)` gives each source row.
template <typename Row>
void stack_rows(float* out, const QueryTile& tile, int64_t D, Row row) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    std::memcpy(out + r * D, row(tile.query(r), tile.head(r)), sizeof(float) * D);
  }
}

// scores(rows x n) = scale * q(rows x D) k(n x D)^T, k's rows `ldk` apart.
void scaled_scores(float* scores, const float* q, const float* k, int64_t rows, int64_t n,
                   int64_t D, int64_t ldk, float scale) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, D, scale, q, D, k, ldk, 0.0f,
              scores, n);
}

// probs = exp(scores - lse) for the tile's rows (0 where masked): the probabilities of
// keys first_key .. first_key + n - 1.
void probabilities(float* probs, const float* scores, const float* row_lse, const QueryTile& tile,
                   int64_t first_key, int64_t n) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    const int64_t visible = std::clamp<int64_t>(tile.query(r) - first_key + 1, 0, n);
    const float* s = scores + r * n;
    float* p = probs + r * n;
    for (int64_t c = 0; c < visible; ++c) p[c] = fast_exp(s[c] - row_lse[r]);
    for (int64_t c = visible; c < n; ++c) p[c] = 0.0f;
  }
}

// dscores = probs * (dprobs - delta) * scale, in place over dprobs.
void score_gradients(float* dprobs, const float* probs, const float* delta, int64_t rows, int64_t n,
                     float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    float* ds = dprobs + r * n;
    const float* p = probs + r * n;
    for (int64_t c = 0; c < n; ++c) ds[c] = p[c] * (ds[c] - delta[r]) * scale;
  }
}

// The row statistics backward needs for a tile: lse and delta = dout . out.
void backward_rows(float* row_lse, float* delta, const QueryTile& tile, const float* lse,
                   const float* dout, const float* out, int64_t b, int64_t T, int64_t H,
                   int64_t D) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    const int64_t t = tile.query(r), h = tile.head(r);
    row_lse[r] = lse[(b * H + h) * T + t];
    const float* o = out + (b * T + t) * H * D + h * D;
    const float* d = dout + (b * T + t) * H * D + h * D;
    float sum = 0.0f;
    for (int64_t i = 0; i < D; ++i) sum += o[i] * d[i];
    delta[r] = sum;
  }
}

// The forward of one task: the stacked query rows of `tile` against keys 0 .. their last.
void forward_tile(float* out, float* lse, const float* qkv, const QkvLayout& L,
                  const QueryTile& tile, int64_t b, int64_t g, int64_t T, int64_t first_query,
                  float scale) {
  const int64_t D = L.D, rows = tile.rows();
  const int64_t last_query = tile.first + tile.count - 1;
  float* q = scratch.get(scratch.q, rows * D);
  float* acc = scratch.get(scratch.acc, rows * D);
  float* scores = scratch.get(scratch.scores, rows * kKeyTile);
  float* row_max = scratch.get(scratch.stat_a, rows);
  float* row_sum = scratch.get(scratch.stat_b, rows);
  stack_rows(q, tile, D, [&](int64_t t, int64_t h) { return L.q(qkv, b, t, h); });
  std::fill(acc, acc + rows * D, 0.0f);
  std::fill(row_max, row_max + rows, kMasked);
  std::fill(row_sum, row_sum + rows, 0.0f);
  for (int64_t k0 = 0; k0 <= last_query; k0 += kKeyTile) {
    const int64_t n = std::min(kKeyTile, last_query + 1 - k0);
    scaled_scores(scores, q, L.k(qkv, b, k0, g), rows, n, D, L.width, scale);
    for (int64_t r = 0; r < rows; ++r) {
      float* s = scores + r * n;
      const int64_t visible = std::clamp<int64_t>(tile.query(r) - k0 + 1, 0, n);
      float m = row_max[r];
      for (int64_t c = 0; c < visible; ++c) m = std::max(m, s[c]);
      const float correction = row_max[r] == kMasked ? 0.0f : fast_exp(row_max[r] - m);
      float sum = 0.0f;
      for (int64_t c = 0; c < visible; ++c) {
        s[c] = fast_exp(s[c] - m);
        sum += s[c];
      }
      for (int64_t c = visible; c < n; ++c) s[c] = 0.0f;
      row_sum[r] = row_sum[r] * correction + sum;
      row_max[r] = m;
      float* a = acc + r * D;
      for (int64_t i = 0; i < D; ++i) a[i] *= correction;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, n, 1.0f, scores, n,
                L.v(qkv, b, k0, g), L.width, 1.0f, acc, D);
  }
  const int64_t H = L.H;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = tile.query(r) - first_query, h = tile.head(r);
    float* o = out + (b * T + t) * H * D + h * D;
    const float inv = 1.0f / row_sum[r];
    for (int64_t i = 0; i < D; ++i) o[i] = acc[r * D + i] * inv;
    lse[(b * H + h) * T + t] = row_max[r] + std::log(row_sum[r]);
  }
}

// The query tiles of a sequence of T queries starting at row `first_query`.
int64_t query_tiles(int64_t T) {
  return (T + kQueryTile - 1) / kQueryTile;
}

QueryTile query_tile(int64_t tile, int64_t T, int64_t first_query, int64_t g, int64_t group) {
  const int64_t t0 = tile * kQueryTile;
  return QueryTile{first_query + t0, std::min(kQueryTile, T - t0), g * group, group};
}

}  // namespace

void attention_forward(float* out, float* lse, const float* qkv, int64_t B, int64_t T, int64_t H,
                       int64_t KVH, int64_t D, int64_t R, int64_t first_query) {
  const QkvLayout L{R, H, KVH, D, (H + 2 * KVH) * D};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int64_t group = H / KVH, tiles = query_tiles(T);
  // Later query tiles see more keys: a dynamic schedule balances them.
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t i = 0; i < tiles; ++i) {
        forward_tile(out, lse, qkv, L, query_tile(i, T, first_query, g, group), b, g, T,
                     first_query, scale);
      }
    }
  }
}

namespace {

// Backward, pass 1: dK and dV of keys k0 .. k0 + n - 1 of head g, over every query tile
// that sees them.
void key_tile_gradients(float* dqkv, const float* dout, const float* qkv, const float* out,
                        const float* lse, const QkvLayout& L, int64_t b, int64_t g, int64_t k0,
                        int64_t n, int64_t T, float scale) {
  const int64_t D = L.D, group = L.H / L.KVH, rows_max = kQueryTile * group;
  float* q = scratch.get(scratch.q, rows_max * D);
  float* d = scratch.get(scratch.dout, rows_max * D);
  float* probs = scratch.get(scratch.probs, rows_max * n);
  float* dprobs = scratch.get(scratch.scores, rows_max * n);
  float* row_lse = scratch.get(scratch.stat_a, rows_max);
  float* delta = scratch.get(scratch.stat_b, rows_max);
  float* dk = scratch.get(scratch.acc, 2 * n * D);
  float* dv = dk + n * D;
  std::fill(dk, dk + 2 * n * D, 0.0f);
  const float* k = L.k(qkv, b, k0, g);
  const float* v = L.v(qkv, b, k0, g);
  for (int64_t i = k0 / kQueryTile; i < query_tiles(T); ++i) {
    const QueryTile tile = query_tile(i, T, 0, g, group);
    const int64_t rows = tile.rows();
    stack_rows(q, tile, D, [&](int64_t t, int64_t h) { return L.q(qkv, b, t, h); });
    stack_rows(d, tile, D,
               [&](int64_t t, int64_t h) { return dout + (b * T + t) * L.H * D + h * D; });
    backward_rows(row_lse, delta, tile, lse, dout, out, b, T, L.H, D);
    scaled_scores(probs, q, k, rows, n, D, L.width, scale);
    probabilities(probs, probs, row_lse, tile, k0, n);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, D, rows, 1.0f, probs, n, d, D, 1.0f, dv,
                D);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, D, 1.0f, d, D, v, L.width, 0.0f,
                dprobs, n);
    score_gradients(dprobs, probs, delta, rows, n, scale);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, D, rows, 1.0f, dprobs, n, q, D, 1.0f,
                dk, D);
  }
  for (int64_t j = 0; j < n; ++j) {
    float* row = dqkv + (b * T + k0 + j) * L.width;
    std::memcpy(row + (L.H + g) * D, dk + j * D, sizeof(float) * D);
    std::memcpy(row + (L.H + L.KVH + g) * D, dv + j * D, sizeof(float) * D);
  }
}

// Backward, pass 2: dQ of the stacked query rows of `tile`, over every key tile they see.
void query_tile_gradients(float* dqkv, const float* dout, const float* qkv, const float* out,
                          const float* lse, const QkvLayout& L, const QueryTile& tile, int64_t b,
                          int64_t g, int64_t T, float scale) {
  const int64_t D = L.D, rows = tile.rows();
  const int64_t last_query = tile.first + tile.count - 1;
  float* q = scratch.get(scratch.q, rows * D);
  float* d = scratch.get(scratch.dout, rows * D);
  float* dq = scratch.get(scratch.acc, rows * D);
  float* probs = scratch.get(scratch.probs, rows * kKeyTile);
  float* dprobs = scratch.get(scratch.scores, rows * kKeyTile);
  float* row_lse = scratch.get(scratch.stat_a, rows);
  float* delta = scratch.get(scratch.stat_b, rows);
  stack_rows(q, tile, D, [&](int64_t t, int64_t h) { return L.q(qkv, b, t, h); });
  stack_rows(d, tile, D,
             [&](int64_t t, int64_t h) { return dout + (b * T + t) * L.H * D + h * D; });
  backward_rows(row_lse, delta, tile, lse, dout, out, b, T, L.H, D);
  std::fill(dq, dq + rows * D, 0.0f);
  for (int64_t k0 = 0; k0 <= last_query; k0 += kKeyTile) {
    const int64_t n = std::min(kKeyTile, last_query + 1 - k0);
    const float* k = L.k(qkv, b, k0, g);
    scaled_scores(probs, q, k, rows, n, D, L.width, scale);
    probabilities(probs, probs, row_lse, tile, k0, n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, n, D, 1.0f, d, D, L.v(qkv, b, k0, g),
                L.width, 0.0f, dprobs, n);
    score_gradients(dprobs, probs, delta, rows, n, scale);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, D, n, 1.0f, dprobs, n, k, L.width,
                1.0f, dq, D);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* row = dqkv + (b * T + tile.query(r)) * L.width + tile.head(r) * D;
    std::memcpy(row, dq + r * D, sizeof(float) * D);
  }
}

}  // namespace

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out,
                        const float* lse, int64_t B, int64_t T, int64_t H, int64_t KVH, int64_t D) {
  const QkvLayout L{T, H, KVH, D, (H + 2 * KVH) * D};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int64_t group = H / KVH, tiles = query_tiles(T);
  const int64_t key_tiles = (T + kKeyTile - 1) / kKeyTile;
  // Earlier key tiles are seen by more queries: a dynamic schedule balances them.
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t j = 0; j < key_tiles; ++j) {
        const int64_t k0 = j * kKeyTile;
        key_tile_gradients(dqkv, dout, qkv, out, lse, L, b, g, k0, std::min(kKeyTile, T - k0), T,
                           scale);
      }
    }
  }
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t i = 0; i < tiles; ++i) {
        query_tile_gradients(dqkv, dout, qkv, out, lse, L, query_tile(i, T, 0, g, group), b, g, T,
                             scale);
      }
    }
  }
}

}  // namespace llmft::cpu
