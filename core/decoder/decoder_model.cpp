#include "core/decoder/decoder_model.h"

#include <algorithm>

#include "core/decoder/parallel_linear.h"
#include "core/error.h"
#include "core/host_convert.h"

namespace llmft {

namespace {

// Every token's position: batch.positions, or position, position + 1, ... along each row.
// Checked as core/backend.h requires: along a row each position is 0 (a sample starts) or
// the one before plus 1, and the first is at most batch.position (so no sample starts
// before its row, and sample starts never fall along a row).
std::vector<int32_t> positions_of(const MicroBatch& batch) {
  const size_t rows = static_cast<size_t>(batch.batch), T = static_cast<size_t>(batch.seq_len);
  std::vector<int32_t> positions(rows * T);
  for (size_t i = 0; i < positions.size(); ++i) {
    const size_t t = i % T;
    positions[i] =
        batch.positions == nullptr ? static_cast<int32_t>(batch.position + t) : batch.positions[i];
    const bool follows = t == 0 ? positions[i] >= 0 && positions[i] <= batch.position
                                : positions[i] == 0 || positions[i] == positions[i - 1] + 1;
    LLMFT_REQUIRE(follows, "internal: token " << t << " of a row has position " << positions[i]
                                              << " after " << (t == 0 ? -1 : positions[i - 1])
                                              << ": positions restart at 0 or rise by 1");
  }
  return positions;
}

}  // namespace

DecoderModel::DecoderModel(const ModelConfig& config, std::unique_ptr<Family> family,
                           Backend& backend, Allocator& allocator, const ModelOptions& options)
    : config_(config),
      family_(std::move(family)),
      be_(backend),
      alloc_(allocator),
      checkpointed_blocks_(options.checkpointed_blocks),
      tp_(options.tp),
      tp_group_(options.tp_group),
      sequence_parallel_(options.sequence_parallel && options.tp.size > 1),
      split_rows_(false) {
  validate(config_);
  LLMFT_REQUIRE(config_.n_kv_head % tp_.size == 0 && config_.intermediate % tp_.size == 0 &&
                    (tp_.size == 1 || tp_group_),
                "internal: tensor-parallel size " << tp_.size << " does not fit the model");
  units_ = unit_layouts(*family_, config_, tp_, kVocabRowMultiple);
  vocab_rows_ = units_[0].params[0].shape[0];
  vocab_start_ = tp_.rank * vocab_rows_;
  loss_sum_ = alloc_.allocate(sizeof(float), MemoryCategory::other, "loss accumulator");
  reset_loss();
}

std::vector<int> DecoderModel::extra_units_read(int unit) const {
  if (unit == head_unit() && config_.tie_embeddings) return {0};
  return {};
}

void DecoderModel::begin_micro_batch(const MicroBatch& batch, float loss_scale,
                                     LogitRows logit_rows) {
  const bool want_logits = logit_rows != LogitRows::none;
  LLMFT_REQUIRE(batch.seq_len <= config_.max_seq_len,
                "sequence length " << batch.seq_len << " exceeds the model's context of "
                                   << config_.max_seq_len << " positions; lower --seq-len");
  if (!kv_caches_.empty()) {
    LLMFT_REQUIRE(want_logits && batch.batch == decode_batch_ &&
                      batch.position + batch.seq_len <= decode_len_,
                  "internal: decoding " << batch.seq_len << " tokens at position " << batch.position
                                        << " exceeds the KV cache of " << decode_len_);
  } else {
    LLMFT_REQUIRE(batch.position == 0, "internal: a position offset needs begin_decoding");
  }
  shape_ = BlockShape{batch.batch, batch.seq_len};
  split_rows_ = sequence_parallel_ && shape_.rows() % tp_.size == 0;
  position_ = batch.position;
  loss_scale_ = loss_scale;
  logit_rows_ = logit_rows;
  const Shape bt{batch.batch, batch.seq_len};
  const size_t bytes = static_cast<size_t>(shape_.rows()) * sizeof(int32_t);
  tokens_ = alloc_.allocate(bytes, MemoryCategory::activations, "input tokens");
  be_.copy_to_device(tokens_.as(DType::i32, bt), batch.inputs);
  positions_ = alloc_.allocate(bytes, MemoryCategory::activations, "token positions");
  be_.copy_to_device(positions_.as(DType::i32, bt), positions_of(batch).data());
  if (!want_logits) {
    targets_ = alloc_.allocate(bytes, MemoryCategory::activations, "target tokens");
    be_.copy_to_device(targets_.as(DType::i32, bt), batch.targets);
  }
  blocks_.clear();
  blocks_.resize(config_.n_layer);
}

int64_t DecoderModel::valid_vocab_rows() const {
  return std::clamp<int64_t>(config_.vocab_size - vocab_start_, 0, vocab_rows_);
}

BlockContext DecoderModel::context(int layer) const {
  BlockContext ctx{be_,      alloc_, config_,   shape_,       position_,  positions(),
                   Tensor(), tp_,    tp_group_, activations_, split_rows_};
  if (layer >= 0 && !kv_caches_.empty()) {
    ctx.kv_cache = ctx.view(kv_caches_[layer], {decode_batch_, decode_len_, ctx.qkv_width()});
  }
  return ctx;
}

void DecoderModel::begin_decoding(int batch, int max_len) {
  LLMFT_REQUIRE(max_len <= config_.max_seq_len,
                "generation of " << max_len << " tokens exceeds the model's context of "
                                 << config_.max_seq_len);
  LLMFT_REQUIRE(!sequence_parallel_, "internal: decoding under sequence parallelism");
  const int64_t W = context().qkv_width();
  kv_caches_.clear();
  for (int l = 0; l < config_.n_layer; ++l) {
    kv_caches_.push_back(
        alloc_.allocate(static_cast<size_t>(batch) * max_len * W * dtype_size(activations_),
                        MemoryCategory::activations, "KV cache"));
  }
  decode_batch_ = batch;
  decode_len_ = max_len;
}

void DecoderModel::end_decoding() {
  kv_caches_.clear();
}

Tensor DecoderModel::hidden(const Buffer& buffer) const {
  return buffer.as(activations_, {context().stream_rows(), config_.hidden});
}

size_t DecoderModel::hidden_bytes() const {
  return static_cast<size_t>(context().stream_rows()) * config_.hidden * dtype_size(activations_);
}

Tensor DecoderModel::block_input(int layer) const {
  return layer == 0 ? hidden(embedding_out_) : hidden(blocks_[layer - 1].out);
}

Tensor DecoderModel::head_weight(const UnitTensors& units, bool grads) const {
  const std::vector<Tensor>& flat = grads ? units.grads : units.params;
  if (config_.tie_embeddings) return units_[0].slice(flat[0], 0);
  const UnitLayout& head = units_[head_unit()];
  return head.slice(flat[head_unit()], static_cast<int>(head.params.size()) - 1);
}

void DecoderModel::forward_unit(int unit, const UnitTensors& units) {
  if (unit == 0) return embedding_forward(units);
  if (unit == head_unit()) return head_forward(units);
  const int layer = unit - 1;
  family_->block_forward(context(layer), units_[unit], units.params[unit], block_input(layer),
                         blocks_[layer]);
  if (logits_only() || checkpointed(layer)) blocks_[layer].internals.reset();
}

void DecoderModel::backward_unit(int unit, const UnitTensors& units, bool keep_activations) {
  LLMFT_REQUIRE(!logits_only(), "internal: backward after a logits-only forward");
  if (unit == 0) return embedding_backward(units, keep_activations);
  if (unit == head_unit()) return head_backward(units, keep_activations);
  const int layer = unit - 1;
  BlockSaved& saved = blocks_[layer];
  if (!saved.internals) {
    // Checkpointed: the next block's backward is done, so this block's output is free
    // to go; recompute everything from the block's input.
    saved.out.reset();
    family_->block_forward(context(), units_[unit], units.params[unit], block_input(layer), saved);
  }
  family_->block_backward(context(), units_[unit], units.params[unit], units.grads[unit],
                          block_input(layer), saved, hidden(stream_));
  if (!keep_activations) {
    saved = BlockSaved();
  } else if (checkpointed(layer)) {
    saved.internals.reset();
  }
}

void DecoderModel::embedding_forward(const UnitTensors& units) {
  const UnitLayout& u = units_[0];
  embedding_out_ = alloc_.allocate(hidden_bytes(), MemoryCategory::activations, "embedding output");
  // Every rank looks up the tokens in its vocabulary rows (others give zero) and the sum
  // over the group completes the rows; tensor-parallel rank 0 adds the positions.
  const bool positions_here = u.params.size() > 1 && tp_.rank == 0;
  const BlockContext ctx = context();
  const Tensor out = hidden(embedding_out_);
  Buffer partial_buf;
  const Tensor partial = ctx.partial_rows(partial_buf, out, "embedding partial sums");
  be_.embedding_forward(partial, tokens_.as(DType::i32, {shape_.batch, shape_.seq_len}),
                        positions(), u.slice(units.params[0], 0),
                        positions_here ? u.slice(units.params[0], 1) : Tensor(), vocab_start_);
  ctx.reduce_rows(partial, out);
}

void DecoderModel::embedding_backward(const UnitTensors& units, bool keep_activations) {
  const UnitLayout& u = units_[0];
  Tensor position_table = u.params.size() > 1 ? u.slice(units.grads[0], 1) : Tensor();
  Buffer rows_buf;
  be_.embedding_backward(u.slice(units.grads[0], 0), position_table,
                         context().gather_rows(rows_buf, hidden(stream_), "embedding gradient"),
                         tokens_.as(DType::i32, {shape_.batch, shape_.seq_len}), positions(),
                         vocab_start_);
  stream_.reset();
  if (!keep_activations) embedding_out_.reset();
}

void DecoderModel::head_forward(const UnitTensors& units) {
  const int64_t N = shape_.rows(), V = vocab_rows_;
  const UnitLayout& head = units_[head_unit()];
  const Tensor& hp = units.params[head_unit()];
  const bool layernorm = family_->norm_kind() == NormKind::layernorm;
  Tensor normed = norm_forward(context(), family_->norm_kind(), head.slice(hp, 0),
                               layernorm ? head.slice(hp, 1) : Tensor(),
                               block_input(config_.n_layer), final_norm_, "final norm");
  const int64_t head_rows = lm_head_rows();
  logits_ = alloc_.allocate(static_cast<size_t>(head_rows * V) * dtype_size(activations_),
                            MemoryCategory::activations, "logits");
  Tensor logits = logits_.as(activations_, {head_rows, V});
  const BlockContext ctx = context();
  {
    Buffer rows_buf, last_buf;
    Tensor head_input = ctx.gather_rows(rows_buf, normed, "LM head input");
    if (head_rows < N) head_input = last_positions(ctx, last_buf, head_input);
    be_.linear_forward(logits, head_input, head_weight(units, false), Tensor());
  }
  if (logits_only()) return;
  Buffer stats_buf;
  Tensor stats =
      ctx.take_f32(stats_buf, {3, N}, MemoryCategory::workspace, "cross-entropy statistics");
  Tensor targets = targets_.as(DType::i32, {N});
  be_.cross_entropy_max(stats, logits, valid_vocab_rows());
  ctx.tp_reduce(stats.view(0, {N}), ReduceOp::max);
  be_.cross_entropy_sums(stats, logits, targets, vocab_start_, valid_vocab_rows());
  ctx.tp_reduce(stats.view(N, {2 * N}));
  be_.cross_entropy_finish(logits, loss_sum_.as(DType::f32, {1}), stats, targets, vocab_start_,
                           valid_vocab_rows(), loss_scale_);
}

int64_t DecoderModel::lm_head_rows() const {
  return logit_rows_ == LogitRows::last ? shape_.batch : shape_.rows();
}

Tensor DecoderModel::last_positions(const BlockContext& ctx, Buffer& buffer, Tensor rows) const {
  const int64_t T = shape_.seq_len, C = rows.dim(-1);
  Tensor last = ctx.take(buffer, {shape_.batch, C}, MemoryCategory::workspace, "last positions");
  for (int64_t b = 0; b < shape_.batch; ++b) {
    be_.copy(last.view(b * C, {C}), rows.view(((b + 1) * T - 1) * C, {C}));
  }
  return last;
}

void DecoderModel::head_backward(const UnitTensors& units, bool keep_activations) {
  const int64_t N = shape_.rows(), V = vocab_rows_;
  const UnitLayout& head = units_[head_unit()];
  const Tensor& hp = units.params[head_unit()];
  const Tensor& hg = units.grads[head_unit()];
  const bool layernorm = family_->norm_kind() == NormKind::layernorm;
  stream_ = alloc_.allocate(hidden_bytes(), MemoryCategory::workspace, "residual gradient");
  Buffer dnorm_buf =
      alloc_.allocate(hidden_bytes(), MemoryCategory::workspace, "final norm gradient");
  Tensor dnorm = hidden(dnorm_buf);
  {
    Buffer rows_buf;
    const BlockContext ctx = context();
    column_parallel_backward(
        ctx, dnorm, head_weight(units, true), Tensor(), logits_.as(activations_, {N, V}),
        ctx.gather_rows(rows_buf, hidden(final_norm_.out), "LM head input (backward)"),
        head_weight(units, false));
  }
  Tensor stream = hidden(stream_);
  be_.fill(stream, 0.0f);
  norm_backward(context(), family_->norm_kind(), stream, head.slice(hg, 0),
                layernorm ? head.slice(hg, 1) : Tensor(), dnorm, block_input(config_.n_layer),
                head.slice(hp, 0), final_norm_);
  if (keep_activations) return;
  logits_.reset();
  final_norm_ = NormSaved();
}

void DecoderModel::end_micro_batch() {
  blocks_.clear();
  logits_.reset();
  final_norm_ = NormSaved();
  embedding_out_.reset();
  stream_.reset();
  tokens_.reset();
  positions_.reset();
  targets_.reset();
}

double DecoderModel::loss_sum() {
  float value = 0.0f;
  be_.copy_to_host(&value, loss_sum_.as(DType::f32, {1}));
  return value;
}

void DecoderModel::reset_loss() {
  be_.fill(loss_sum_.as(DType::f32, {1}), 0.0f);
}

std::vector<float> DecoderModel::logits() {
  LLMFT_REQUIRE(logits_only() && !logits_.empty(), "internal: no logits kept");
  LLMFT_REQUIRE(tp_.size == 1, "logits are read on one rank; generate with tensor-parallel size 1");
  const int64_t rows = lm_head_rows(), stored = rows * vocab_rows_, V = config_.vocab_size;
  std::vector<uint8_t> bytes(static_cast<size_t>(stored) * dtype_size(activations_));
  be_.copy_to_host(bytes.data(), logits_.as(activations_, {stored}));
  // Each row holds the vocabulary, then its padding.
  const std::vector<float> padded = from_dtype_bytes(bytes, activations_);
  std::vector<float> values(static_cast<size_t>(rows * V));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(padded.begin() + r * vocab_rows_, V, values.begin() + r * V);
  }
  return values;
}

}  // namespace llmft
