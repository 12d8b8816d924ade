// What a transformer block implementation works with: the shape of the micro-batch,
// the backend and allocator, and the buffers it keeps between forward and backward.
#pragma once

#include <memory>
#include <string>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/model_config.h"
#include "core/reduce_group.h"
#include "core/tp_slice.h"

namespace llmft {

struct BlockShape {
  int batch = 0;
  int seq_len = 0;
  int64_t rows() const { return static_cast<int64_t>(batch) * seq_len; }
};

struct BlockContext {
  Backend& be;
  Allocator& alloc;
  const ModelConfig& config;
  BlockShape shape;
  int64_t position_offset = 0;  // position of the first token
  Tensor positions;             // (B, T) i32: every token's position (core/backend.h)
  Tensor kv_cache;  // decoding: this block's (B, R, W) cache of earlier qkv rows, or undefined
  TpSlice tp;       // the part of each layer this rank computes
  ReduceGroup* tp_group = nullptr;  // the tensor-parallel group; null when tp.size == 1
  DType activations = DType::f32;   // the compute dtype: activations and their gradients
  // Sequence parallelism (ModelOptions): this rank's part of the residual stream is rows
  // tp.rank x stream_rows() .. of the micro-batch's (batch x seq) rows, in order.
  bool sequence_parallel = false;

  // This rank's attention heads and key/value heads.
  int heads() const { return config.n_head / tp.size; }
  int kv_heads() const { return config.n_kv_head / tp.size; }
  // Width of the packed qkv rows this rank computes: (heads + 2 kv heads) x head size.
  int64_t qkv_width() const {
    return static_cast<int64_t>(heads() + 2 * kv_heads()) * config.head_dim();
  }
  // Starts reducing t in place over the tensor-parallel group (null when there is none).
  std::unique_ptr<CommRequest> start_tp_reduce(Tensor t, ReduceOp op = ReduceOp::sum) const;
  // The same, waited for on the device: later kernels read the result (CommRequest).
  void tp_reduce(Tensor t, ReduceOp op = ReduceOp::sum) const;

  // Rows of the residual stream this rank holds: all of them, or 1/tp of them under
  // sequence parallelism.
  int64_t stream_rows() const { return sequence_parallel ? shape.rows() / tp.size : shape.rows(); }
  // Every row of `local` (stream_rows() rows): itself, or under sequence parallelism all
  // ranks' rows gathered into `buffer` (workspace).
  Tensor gather_rows(Buffer& buffer, Tensor local, const std::string& what) const;
  // Where a layer writes results over every row that the group then sums into `local`
  // (stream rows): `local` itself, or under sequence parallelism a workspace in `buffer`.
  Tensor partial_rows(Buffer& buffer, Tensor local, const std::string& what) const;
  // Starts that sum: an all-reduce of `local` in place, or under sequence parallelism a
  // reduce-scatter of `partial` into `local` (null without a group).
  std::unique_ptr<CommRequest> start_reduce_rows(Tensor partial, Tensor local) const;
  // The same, waited for on the device: later kernels read the result (CommRequest).
  void reduce_rows(Tensor partial, Tensor local) const;

  // Takes a buffer of `shape` in the activations' dtype and returns its tensor view.
  Tensor take(Buffer& buffer, Shape shape, MemoryCategory category, const std::string& what) const;
  // The same for a statistic, which is f32 whatever the compute dtype.
  Tensor take_f32(Buffer& buffer, Shape shape, MemoryCategory category,
                  const std::string& what) const;
  // The activation tensor of `shape` in a buffer taken with take().
  Tensor view(const Buffer& buffer, Shape shape) const {
    return buffer.as(activations, std::move(shape));
  }
  // What attention reads: qkv(B, T, W) itself, or, when decoding, the KV cache after qkv is
  // written into its rows position_offset .. position_offset + T - 1.
  Tensor attention_input(Tensor qkv) const;
  // The row of attention_input() holding the first query.
  int64_t first_query() const { return kv_cache.defined() ? position_offset : 0; }
};

// The family-specific activations a block's backward reads.
struct BlockInternals {
  virtual ~BlockInternals() = default;
};

// A block's activations kept for backward: its output (the next unit's input) and its
// internals. Under activation checkpointing only `out` is kept; backward recomputes
// the internals from the block's input.
struct BlockSaved {
  Buffer out;
  std::unique_ptr<BlockInternals> internals;
};

}  // namespace llmft
