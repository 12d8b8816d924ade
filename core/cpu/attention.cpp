// Memory-light causal self-attention on CPU, blocked like flash attention (docs/
// ARCHITECTURE.md, "CPU attention"). Queries and keys are cut into tiles (the forward's
// keys into blocks of 1024, which measured faster than 128); every tile product is a
// register-blocked product of our own (core/cpu/tile_products.h) over operands in cache:
// a task's keys and values laid out once (KeyRun; transposed where they are the right-hand
// side of q k^T or dout v^T), with the query rows of all heads that share a key/value head
// stacked into one tall tile so that GQA reads each key/value tile once. Forward keeps an
// online softmax per query row and only the row's log-sum-exp; backward recomputes the
// probabilities from q, k and the log-sum-exp, so no (B, H, T, T) tensor exists. A query
// sees the keys from the start of its sample (its row minus its position: positions restart
// at every sample packed into a window) up to its own row; key tiles wholly outside what a
// query tile sees are skipped, and so are the keys a whole chunk of a diagonal tile's rows
// does not see (causal_rows).
//
// Every output element is written by one task in a fixed order, so results depend neither
// on the thread count nor on the schedule: forward tasks are (batch, key/value head), or
// (batch, key/value head, query tile) when there are fewer of those than threads; backward
// tasks are (batch, key/value head), or, when there are fewer of those than threads, a pass
// of (batch, key/value head, key tile) tasks for dK and dV and a pass of (batch, key/value
// head, query tile) tasks for dQ, which recompute 2 of the 5 tile products; both add in the
// same order (no atomics, no per-thread partial sums).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/tile_products.h"
#include "core/cpu/vector_math.h"

namespace llmft::cpu {

namespace {

constexpr int64_t kQueryTile = 128;
constexpr int64_t kKeyTile = 128;
constexpr int64_t kForwardKeyTile = 1024;  // keys a forward scores product takes
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
// first + r % count of head h0 + r / count. `positions` are the positions of the batch
// row's T queries, the first of which is row `first_query`.
struct QueryTile {
  int64_t first, count, h0, group;
  const int32_t* positions;
  int64_t first_query;
  int64_t rows() const { return count * group; }
  int64_t query(int64_t r) const { return first + r % count; }
  int64_t head(int64_t r) const { return h0 + r / count; }
  // The first key row query row q sees: the start of its sample.
  int64_t sample_start(int64_t q) const { return q - positions[q - first_query]; }
  // The first key any query of the tile sees (sample starts never fall as queries rise).
  int64_t first_visible_key() const { return sample_start(first); }
  // Which of the n keys from first_key stacked row r sees: [begin, end) (the causal mask
  // within the query's sample).
  int64_t visible_begin(int64_t r, int64_t first_key, int64_t n) const {
    return std::clamp<int64_t>(sample_start(query(r)) - first_key, 0, n);
  }
  int64_t visible_end(int64_t r, int64_t first_key, int64_t n) const {
    return std::clamp<int64_t>(query(r) - first_key + 1, 0, n);
  }
};

// The first key tile that a query tile whose first visible key is `key` needs.
int64_t first_key_tile_start(int64_t key, int64_t tile) {
  return key / tile * tile;
}

// Head h of token t of batch b in an attention output (or its gradient) of (B, T, H D).
template <typename F>
F* head_row(F* x, int64_t b, int64_t t, int64_t h, int64_t T, int64_t H, int64_t D) {
  return x + ((b * T + t) * H + h) * D;
}

// A thread's scratch, kept across calls (sized by the largest tile seen).
struct Scratch {
  std::vector<float> q, dout, acc, scores, probs, stat_a, stat_b, key_grads;
  std::vector<float> key_panels, value_panels, keys, values;
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

// x(rows x cols, rows ld apart) copied into `buffer` with its rows adjacent.
const float* adjacent_rows(std::vector<float>& buffer, const float* x, int64_t rows, int64_t cols,
                           int64_t ld) {
  float* out = scratch.get(buffer, rows * cols);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(out + r * cols, x + r * ld, sizeof(float) * cols);
  return out;
}

// x(rows x cols, rows ld apart) transposed into `buffer` in the tile products' panels.
const float* panels_of(std::vector<float>& buffer, const float* x, int64_t rows, int64_t cols,
                       int64_t ld) {
  float* out = scratch.get(buffer, rows * cols);
  transpose_panels(out, x, rows, cols, ld);
  return out;
}

// Keys first .. first + count - 1 of one (batch, key/value head), laid out once for every
// tile product that takes them: k and v transposed into panels (the right-hand sides of
// q k^T and dout v^T), k and v with adjacent rows (of p v and dscores k); each caller lays
// out only what it uses. A run from key k0 on starts at a panel boundary whenever k0 - first
// is a multiple of the tiles (128 or 1024 keys).
struct KeyRun {
  int64_t first, count, D;
  const float *key_panels, *value_panels, *keys, *values;
  int64_t offset(int64_t k0) const { return (k0 - first) * D; }
  int64_t rows_from(int64_t k0) const { return count - (k0 - first); }
};

// c(rows x n, rows ldc apart) = alpha * a(rows x D) x^T for keys k0 .. k0 + n - 1 of a
// run's panels.
void product_with_keys(float* c, int64_t ldc, const float* a, const float* panels,
                       const KeyRun& run, int64_t k0, int64_t rows, int64_t n, float alpha) {
  transposed_product(c, ldc, a, run.D, 1, panels + run.offset(k0), run.rows_from(k0), rows, n,
                     run.D, alpha, false);
}

// Rows a causal-skipping product takes at a time (4 register tiles).
constexpr int64_t kCausalRows = 24;

// Runs product(r0, r1, keys) over the tile's rows for keys k0 .. k0 + n - 1: once over
// all rows and all n keys when every row sees them all, else per kCausalRows rows of each
// head, with `keys` the most that any row of those sees (rounded up to a multiple of 16,
// at most n). Products that take keys as columns leave the rest of a row unwritten (the
// softmax masks them, and reads them only to discard them); products that take them as
// depth skip terms whose probability or score gradient is 0, which adds nothing.
template <typename Product>
void causal_rows(const QueryTile& tile, int64_t k0, int64_t n, Product product) {
  if (tile.visible_end(0, k0, n) == n) {
    product(0, tile.rows(), n);
    return;
  }
  for (int64_t h = 0; h < tile.group; ++h) {
    const int64_t head_end = (h + 1) * tile.count;
    for (int64_t r0 = h * tile.count; r0 < head_end; r0 += kCausalRows) {
      const int64_t r1 = std::min(r0 + kCausalRows, head_end);
      const int64_t seen = tile.visible_end(r1 - 1, k0, n);
      product(r0, r1, std::min(n, (seen + 15) / 16 * 16));
    }
  }
}

// Runs product(c0, c1, r0, r1) for a product that takes keys k0 + c0 .. k0 + c1 - 1 as
// its output rows and the tile's stacked rows r0 .. r1 - 1 as its depth (dv += probs^T
// dout, dk += dscores^T q): once over all n keys and rows when every row sees every key,
// else per kCausalRows keys and per head, over the head's rows that see any of those keys
// (the causal mask makes the earlier rows' terms zero).
template <typename Product>
void causal_keys(const QueryTile& tile, int64_t k0, int64_t n, Product product) {
  if (tile.visible_end(0, k0, n) == n) {
    product(0, n, 0, tile.rows());
    return;
  }
  for (int64_t c0 = 0; c0 < n; c0 += kCausalRows) {
    const int64_t c1 = std::min(c0 + kCausalRows, n);
    const int64_t unseen = std::clamp<int64_t>(k0 + c0 - tile.first, 0, tile.count);
    if (unseen == tile.count) continue;
    for (int64_t h = 0; h < tile.group; ++h) {
      product(c0, c1, h * tile.count + unseen, (h + 1) * tile.count);
    }
  }
}

// row[c] = value(c) for the columns [begin, end) of n that a row sees, 0 for the rest:
// value computed only where seen, with no mask select (the diagonal tiles' rows, about
// half of the forward's exps, ran a select over all n columns: 3-5% of the forward).
template <typename Value>
inline void visible_columns(float* row, int64_t begin, int64_t end, int64_t n, Value value) {
  std::fill(row, row + begin, 0.0f);
  for (int64_t c = begin; c < end; ++c) row[c] = value(c);
  std::fill(row + end, row + n, 0.0f);
}

// Scores into probabilities in place, exp(score - lse) for the tile's rows (0 where masked),
// for keys first_key .. first_key + n - 1. (One pointer and the row's statistic in a local:
// with a separate source, or the statistic read through a pointer, the compiler versions
// the loop for aliasing, and in place its scalar version is the one that runs.)
void probabilities(float* scores, const float* row_lse, const QueryTile& tile, int64_t first_key,
                   int64_t n) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    const int64_t begin = tile.visible_begin(r, first_key, n);
    const int64_t end = tile.visible_end(r, first_key, n);
    const float lse = row_lse[r];
    float* p = scores + r * n;
    visible_columns(p, begin, end, n, [&](int64_t c) { return fast_exp(p[c] - lse); });
  }
}

// dscores = probs * (dprobs - delta) * scale, in place over dprobs, for the keys each row
// sees (0 elsewhere, whatever dprobs held there: causal_rows may leave it unwritten).
void score_gradients(float* dprobs, const float* probs, const float* delta, const QueryTile& tile,
                     int64_t first_key, int64_t n, float scale) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    const int64_t begin = tile.visible_begin(r, first_key, n);
    const int64_t end = tile.visible_end(r, first_key, n);
    float* ds = dprobs + r * n;
    const float* p = probs + r * n;
    const float row_delta = delta[r];
    visible_columns(ds, begin, end, n,
                    [&](int64_t c) { return p[c] * (ds[c] - row_delta) * scale; });
  }
}

// The row statistics backward needs for a tile: lse and delta = dout . out.
void backward_rows(float* row_lse, float* delta, const QueryTile& tile, const float* lse,
                   const float* dout, const float* out, int64_t b, int64_t T, int64_t H,
                   int64_t D) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    const int64_t t = tile.query(r), h = tile.head(r);
    row_lse[r] = lse[(b * H + h) * T + t];
    const float* o = head_row(out, b, t, h, T, H, D);
    const float* d = head_row(dout, b, t, h, T, H, D);
    float sum = 0.0f;
    for (int64_t i = 0; i < D; ++i) sum += o[i] * d[i];
    delta[r] = sum;
  }
}

// The forward of one task: the stacked query rows of `tile` against the keys they see.
void forward_tile(float* out, float* lse, const QkvLayout& L, const QueryTile& tile,
                  const KeyRun& run, const float* qkv, int64_t b, int64_t T, int64_t first_query,
                  float scale) {
  const int64_t D = L.D, rows = tile.rows();
  const int64_t last_query = tile.first + tile.count - 1;
  float* q = scratch.get(scratch.q, rows * D);
  float* acc = scratch.get(scratch.acc, rows * D);
  float* scores = scratch.get(scratch.scores, rows * kForwardKeyTile);
  float* row_max = scratch.get(scratch.stat_a, rows);
  float* row_sum = scratch.get(scratch.stat_b, rows);
  stack_rows(q, tile, D, [&](int64_t t, int64_t h) { return L.q(qkv, b, t, h); });
  std::fill(acc, acc + rows * D, 0.0f);
  std::fill(row_max, row_max + rows, kMasked);
  std::fill(row_sum, row_sum + rows, 0.0f);
  for (int64_t k0 = first_key_tile_start(tile.first_visible_key(), kForwardKeyTile);
       k0 <= last_query; k0 += kForwardKeyTile) {
    const int64_t n = std::min(kForwardKeyTile, last_query + 1 - k0);
    causal_rows(tile, k0, n, [&](int64_t r0, int64_t r1, int64_t keys) {
      product_with_keys(scores + r0 * n, n, q + r0 * D, run.key_panels, run, k0, r1 - r0, keys,
                        scale);
    });
    for (int64_t r = 0; r < rows; ++r) {
      float* s = scores + r * n;
      const int64_t begin = tile.visible_begin(r, k0, n), end = tile.visible_end(r, k0, n);
      const float m = lane_max(s + begin, end - begin, row_max[r]);
      const float correction = row_max[r] == kMasked ? 0.0f : fast_exp(row_max[r] - m);
      visible_columns(s, begin, end, n, [&](int64_t c) { return fast_exp(s[c] - m); });
      row_sum[r] = row_sum[r] * correction + lane_sum(s, n);
      row_max[r] = m;
      float* a = acc + r * D;
      for (int64_t i = 0; i < D; ++i) a[i] *= correction;
    }
    causal_rows(tile, k0, n, [&](int64_t r0, int64_t r1, int64_t keys) {
      tile_product({acc + r0 * D, D, scores + r0 * n, n, 1, run.values + run.offset(k0), D, r1 - r0,
                    D, keys, 1.0f, true});
    });
  }
  const int64_t H = L.H;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = tile.query(r) - first_query, h = tile.head(r);
    float* o = head_row(out, b, t, h, T, H, D);
    const float inv = 1.0f / row_sum[r];
    for (int64_t i = 0; i < D; ++i) o[i] = acc[r * D + i] * inv;
    lse[(b * H + h) * T + t] = row_max[r] + std::log(row_sum[r]);
  }
}

// The query tiles of a sequence of T queries starting at row `first_query`.
int64_t query_tiles(int64_t T) {
  return (T + kQueryTile - 1) / kQueryTile;
}

QueryTile query_tile(int64_t tile, int64_t T, int64_t first_query, int64_t g, int64_t group,
                     const int32_t* positions) {
  const int64_t t0 = tile * kQueryTile;
  return QueryTile{first_query + t0, std::min(kQueryTile, T - t0), g * group, group, positions,
                   first_query};
}

// What the forward's products take of keys first .. first + count - 1: k's panels and v.
KeyRun forward_keys(const float* qkv, const QkvLayout& L, int64_t b, int64_t g, int64_t first,
                    int64_t count) {
  const int64_t D = L.D;
  return KeyRun{first,
                count,
                D,
                panels_of(scratch.key_panels, L.k(qkv, b, first, g), count, D, L.width),
                nullptr,
                nullptr,
                adjacent_rows(scratch.values, L.v(qkv, b, first, g), count, D, L.width)};
}

}  // namespace

void attention_forward(float* out, float* lse, const float* qkv, const int32_t* positions,
                       int64_t B, int64_t T, int64_t H, int64_t KVH, int64_t D, int64_t R,
                       int64_t first_query) {
  const QkvLayout L{R, H, KVH, D, (H + 2 * KVH) * D};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int64_t group = H / KVH, tiles = query_tiles(T);
  auto tile = [&](int64_t b, int64_t g, int64_t i) {
    return query_tile(i, T, first_query, g, group, positions + b * T);
  };
  // With a (batch, key/value head) task per thread or more, each task lays out its keys
  // once for all its query tiles; with fewer, (batch, key/value head, query tile) tasks lay
  // out the keys each tile sees, and a dynamic schedule balances the later tiles' longer
  // rows. Each query row is computed alike in both.
  if (B * KVH >= omp_get_max_threads()) {
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t g = 0; g < KVH; ++g) {
        const KeyRun run = forward_keys(qkv, L, b, g, 0, R);
        for (int64_t i = 0; i < tiles; ++i) {
          forward_tile(out, lse, L, tile(b, g, i), run, qkv, b, T, first_query, scale);
        }
      }
    }
    return;
  }
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t i = 0; i < tiles; ++i) {
        const QueryTile t = tile(b, g, i);
        const int64_t first = first_key_tile_start(t.first_visible_key(), kForwardKeyTile);
        const KeyRun run = forward_keys(qkv, L, b, g, first, t.first + t.count - first);
        forward_tile(out, lse, L, t, run, qkv, b, T, first_query, scale);
      }
    }
  }
}

namespace {

// What backward needs of one task's (batch, key/value head): the inputs, their layout, and
// the scale.
struct BackwardTask {
  float* dqkv;
  const float *dout, *qkv, *out, *lse;
  const int32_t* positions;
  const QkvLayout& L;
  int64_t b, g, T;
  float scale;

  int64_t group() const { return L.H / L.KVH; }
  QueryTile tile(int64_t i) const { return query_tile(i, T, 0, g, group(), positions + b * T); }
  const float* dout_row(int64_t t, int64_t h) const { return head_row(dout, b, t, h, T, L.H, L.D); }
  float* dq_row(int64_t t, int64_t h) const { return dqkv + (b * T + t) * L.width + h * L.D; }
};

// Stacks the query tile's q and dout rows and its rows' lse and delta into the scratch.
void stack_backward_rows(const BackwardTask& task, const QueryTile& tile) {
  const QkvLayout& L = task.L;
  const int64_t rows = tile.rows();
  stack_rows(scratch.get(scratch.q, rows * L.D), tile, L.D,
             [&](int64_t t, int64_t h) { return L.q(task.qkv, task.b, t, h); });
  stack_rows(scratch.get(scratch.dout, rows * L.D), tile, L.D,
             [&](int64_t t, int64_t h) { return task.dout_row(t, h); });
  backward_rows(scratch.get(scratch.stat_a, rows), scratch.get(scratch.stat_b, rows), tile,
                task.lse, task.dout, task.out, task.b, task.T, L.H, L.D);
}

// The gradients of one (query tile, key tile) pair, from the stacked rows in the scratch:
// dk and dv (n x D) += this pair's part (when given), and this pair's dq part added to the
// query rows' dq sums (rows x D, when given). Every schedule calls it with the same shapes
// and accumulates in the same order (dk, dv over query tiles upwards; dq over key tiles
// upwards), so every schedule gives the same bits.
void pair_gradients(const BackwardTask& task, const QueryTile& tile, const KeyRun& run, int64_t k0,
                    int64_t n, float* dk, float* dv, float* dq) {
  const QkvLayout& L = task.L;
  const int64_t D = L.D, rows = tile.rows();
  const float* q = scratch.q.data();
  const float* d = scratch.dout.data();
  const float* row_lse = scratch.stat_a.data();
  const float* delta = scratch.stat_b.data();
  float* probs = scratch.get(scratch.probs, rows * n);
  float* dprobs = scratch.get(scratch.scores, rows * n);
  causal_rows(tile, k0, n, [&](int64_t r0, int64_t r1, int64_t keys) {
    product_with_keys(probs + r0 * n, n, q + r0 * D, run.key_panels, run, k0, r1 - r0, keys,
                      task.scale);
  });
  probabilities(probs, row_lse, tile, k0, n);
  // dv += probs^T dout and dk += dscores^T q: probs and dscores read transposed.
  // The product of a transposed tile's rows c0 .. c1 - 1 (keys) over rows r0 .. r1 - 1 of
  // the stacked `x` (queries), added to `out`'s key rows.
  const auto add_key_rows = [&](float* out, const float* transposed, const float* x) {
    causal_keys(tile, k0, n, [&](int64_t c0, int64_t c1, int64_t r0, int64_t r1) {
      tile_product({out + c0 * D, D, transposed + r0 * n + c0, 1, n, x + r0 * D, D, c1 - c0, D,
                    r1 - r0, 1.0f, true});
    });
  };
  if (dv != nullptr) add_key_rows(dv, probs, d);
  causal_rows(tile, k0, n, [&](int64_t r0, int64_t r1, int64_t keys) {
    product_with_keys(dprobs + r0 * n, n, d + r0 * D, run.value_panels, run, k0, r1 - r0, keys,
                      1.0f);
  });
  score_gradients(dprobs, probs, delta, tile, k0, n, task.scale);
  if (dk != nullptr) add_key_rows(dk, dprobs, q);
  if (dq == nullptr) return;
  causal_rows(tile, k0, n, [&](int64_t r0, int64_t r1, int64_t keys) {
    tile_product({dq + r0 * D, D, dprobs + r0 * n, n, 1, run.keys + run.offset(k0), D, r1 - r0, D,
                  keys, 1.0f, true});
  });
}

int64_t key_tiles(int64_t T) {
  return (T + kKeyTile - 1) / kKeyTile;
}

// What the backward's products take of keys first .. first + count - 1: the panels of k
// and v and k's rows.
KeyRun backward_keys(const BackwardTask& task, int64_t first, int64_t count) {
  const QkvLayout& L = task.L;
  const int64_t D = L.D;
  const float* k = L.k(task.qkv, task.b, first, task.g);
  return KeyRun{
      first,
      count,
      D,
      panels_of(scratch.key_panels, k, count, D, L.width),
      panels_of(scratch.value_panels, L.v(task.qkv, task.b, first, task.g), count, D, L.width),
      adjacent_rows(scratch.keys, k, count, D, L.width),
      nullptr};
}

// Writes the tile's dq sums (rows x D, in the scratch) into the rows of dqkv.
void write_dq(const BackwardTask& task, const QueryTile& tile, const float* dq) {
  for (int64_t r = 0; r < tile.rows(); ++r) {
    std::memcpy(task.dq_row(tile.query(r), tile.head(r)), dq + r * task.L.D,
                sizeof(float) * task.L.D);
  }
}

// Writes rows k0 .. k0 + n - 1 of the task's dk and dv (n x D each) into dqkv.
void write_key_grads(const BackwardTask& task, int64_t k0, int64_t n, const float* dk,
                     const float* dv) {
  const int64_t D = task.L.D;
  for (int64_t r = 0; r < n; ++r) {
    float* row = task.dqkv + (task.b * task.T + k0 + r) * task.L.width;
    std::memcpy(row + (task.L.H + task.g) * D, dk + r * D, sizeof(float) * D);
    std::memcpy(row + (task.L.H + task.L.KVH + task.g) * D, dv + r * D, sizeof(float) * D);
  }
}

// dk and dv of key tile j over the query tiles that see it; writes them into dqkv.
void key_tile(const BackwardTask& task, int64_t j) {
  const int64_t D = task.L.D, k0 = j * kKeyTile, n = std::min(kKeyTile, task.T - k0);
  std::vector<float> dk(2 * n * D, 0.0f);  // beside the scratch: pairs reuse all of it
  float* dv = dk.data() + n * D;
  const KeyRun run = backward_keys(task, k0, n);
  for (int64_t i = k0 / kQueryTile; i < query_tiles(task.T); ++i) {
    const QueryTile tile = task.tile(i);
    if (tile.first_visible_key() >= k0 + n) break;  // later tiles start later samples
    stack_backward_rows(task, tile);
    pair_gradients(task, tile, run, k0, n, dk.data(), dv, nullptr);
  }
  write_key_grads(task, k0, n, dk.data(), dv);
}

// dq of query tile i over the key tiles it sees, upwards; given dk and dv of the whole
// sequence (T x D each), also adds the tile's parts of them. With equal query and key
// tiles, every pair has key_tile's shape (the diagonal pair's keys end at the tile's last
// query and at key_tile's tile end alike), so the bits are key_tile's. `run` holds at least
// the keys the tile sees, from a key tile's start.
void query_tile_pairs(const BackwardTask& task, int64_t i, const KeyRun& run, float* dk,
                      float* dv) {
  static_assert(kQueryTile == kKeyTile, "pairs must have the same shapes in both schedules");
  const int64_t D = task.L.D;
  const QueryTile tile = task.tile(i);
  stack_backward_rows(task, tile);
  float* dq = scratch.get(scratch.acc, tile.rows() * D);
  std::fill(dq, dq + tile.rows() * D, 0.0f);
  const int64_t last_query = tile.first + tile.count - 1;
  for (int64_t k0 = first_key_tile_start(tile.first_visible_key(), kKeyTile); k0 <= last_query;
       k0 += kKeyTile) {
    pair_gradients(task, tile, run, k0, std::min(kKeyTile, last_query + 1 - k0),
                   dk ? dk + k0 * D : nullptr, dv ? dv + k0 * D : nullptr, dq);
  }
  write_dq(task, tile, dq);
}

// Every pair of one task, query tiles outermost, so that each query tile's rows are stacked
// once (key_tile stacks them again for every key tile they see) and the keys laid out once:
// dk and dv of the whole sequence accumulate in the scratch (2 x T x D floats), each key
// tile's over the query tiles upwards, as key_tile adds.
void task_pairs(const BackwardTask& task) {
  const int64_t D = task.L.D, T = task.T;
  float* dk = scratch.get(scratch.key_grads, 2 * T * D);
  float* dv = dk + T * D;
  std::fill(dk, dk + 2 * T * D, 0.0f);
  const KeyRun run = backward_keys(task, 0, T);
  for (int64_t i = 0; i < query_tiles(T); ++i) query_tile_pairs(task, i, run, dk, dv);
  write_key_grads(task, 0, T, dk, dv);
}

// The dq pass of the two-pass schedule: query tile i over the keys it sees.
void dq_of_query_tile(const BackwardTask& task, int64_t i) {
  const QueryTile tile = task.tile(i);
  const int64_t first = first_key_tile_start(tile.first_visible_key(), kKeyTile);
  query_tile_pairs(task, i, backward_keys(task, first, tile.first + tile.count - first), nullptr,
                   nullptr);
}

}  // namespace

void attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out,
                        const float* lse, const int32_t* positions, int64_t B, int64_t T, int64_t H,
                        int64_t KVH, int64_t D) {
  const QkvLayout L{T, H, KVH, D, (H + 2 * KVH) * D};
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  auto task = [&](int64_t b, int64_t g) {
    return BackwardTask{dqkv, dout, qkv, out, lse, positions, L, b, g, T, scale};
  };
  // With a (batch, key/value head) task per thread or more, each task runs all its pairs
  // once (5 tile products each). With fewer, a key-tile pass (dk, dv) and a query-tile pass
  // (dq) keep every thread busy at the price of recomputing 2 of the products. Both give
  // the same bits (pair_gradients), so the choice is only a matter of speed.
  if (B * KVH >= omp_get_max_threads()) {
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t g = 0; g < KVH; ++g) {
        task_pairs(task(b, g));
      }
    }
    return;
  }
  // Earlier key tiles are seen by more queries, later query tiles see more keys: dynamic
  // schedules balance them.
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t j = 0; j < key_tiles(T); ++j) key_tile(task(b, g), j);
    }
  }
#pragma omp parallel for collapse(3) schedule(dynamic)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t g = 0; g < KVH; ++g) {
      for (int64_t i = 0; i < query_tiles(T); ++i) dq_of_query_tile(task(b, g), i);
    }
  }
}

}  // namespace llmft::cpu
