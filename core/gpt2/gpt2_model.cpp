#include "core/gpt2/gpt2_model.h"

#include "core/error.h"

namespace llmft {

namespace {

UnitLayout embedding_layout(const ModelConfig& c) {
  UnitLayout u;
  u.name = "embedding";
  ParamInfo wte{"transformer.wte.weight", {c.vocab_size, c.hidden}};
  wte.weight_decay = true;
  wte.init_std = 0.02f;
  u.add(wte);
  ParamInfo wpe{"transformer.wpe.weight", {c.max_seq_len, c.hidden}};
  wpe.weight_decay = true;
  wpe.init_std = 0.01f;
  u.add(wpe);
  return u;
}

UnitLayout head_layout(const ModelConfig& c) {
  UnitLayout u;
  u.name = "head";
  ParamInfo w{"transformer.ln_f.weight", {c.hidden}};
  w.init_value = 1.0f;
  u.add(w);
  u.add(ParamInfo{"transformer.ln_f.bias", {c.hidden}});
  return u;
}

Tensor f32(const Buffer& b, Shape shape) {
  return b.as(DType::f32, std::move(shape));
}

}  // namespace

Gpt2Model::Gpt2Model(const ModelConfig& config, Backend& backend, Allocator& allocator)
    : config_(config), be_(backend), alloc_(allocator) {
  validate(config_);
  LLMFT_REQUIRE(config_.family == ModelFamily::gpt2 && config_.tie_embeddings,
                "internal: Gpt2Model needs a GPT-2 config with tied embeddings");
  units_.push_back(embedding_layout(config_));
  for (int l = 0; l < config_.n_layer; ++l) units_.push_back(gpt2_block_layout(config_, l));
  units_.push_back(head_layout(config_));
  loss_sum_ = alloc_.allocate(sizeof(float), MemoryCategory::other, "loss accumulator");
  reset_loss();
}

std::vector<int> Gpt2Model::extra_units_read(int unit) const {
  if (unit == head_unit()) return {0};
  return {};
}

int Gpt2Model::grads_completed_by(int unit) const {
  return unit;
}

void Gpt2Model::begin_micro_batch(const MicroBatch& batch, float loss_scale, bool want_logits) {
  LLMFT_REQUIRE(batch.seq_len <= config_.max_seq_len,
                "sequence length " << batch.seq_len << " exceeds the model's context of "
                                   << config_.max_seq_len << " positions; lower --seq-len");
  shape_ = BlockShape{batch.batch, batch.seq_len};
  loss_scale_ = loss_scale;
  want_logits_ = want_logits;
  const Shape bt{batch.batch, batch.seq_len};
  const size_t bytes = static_cast<size_t>(shape_.rows()) * sizeof(int32_t);
  tokens_ = alloc_.allocate(bytes, MemoryCategory::activations, "input tokens");
  be_.copy_to_device(tokens_.as(DType::i32, bt), batch.inputs);
  if (!want_logits) {
    targets_ = alloc_.allocate(bytes, MemoryCategory::activations, "target tokens");
    be_.copy_to_device(targets_.as(DType::i32, bt), batch.targets);
  }
  blocks_.clear();
  blocks_.resize(config_.n_layer);
}

Tensor Gpt2Model::block_input(int layer) const {
  const Shape nc{shape_.rows(), config_.hidden};
  return layer == 0 ? f32(embedding_out_, nc) : f32(blocks_[layer - 1].out, nc);
}

void Gpt2Model::forward_unit(int unit, const UnitTensors& units) {
  const int64_t N = shape_.rows(), C = config_.hidden;
  if (unit == 0) {
    embedding_out_ =
        alloc_.allocate(N * C * sizeof(float), MemoryCategory::activations, "embedding output");
    const UnitLayout& u = units_[0];
    be_.embedding_forward(f32(embedding_out_, {N, C}),
                          tokens_.as(DType::i32, {shape_.batch, shape_.seq_len}),
                          u.slice(units.params[0], 0), u.slice(units.params[0], 1));
  } else if (unit == head_unit()) {
    head_forward(units);
  } else {
    const int layer = unit - 1;
    gpt2_block_forward(be_, alloc_, config_, shape_,
                       bind_gpt2_block(units_[unit], units.params[unit]), block_input(layer),
                       blocks_[layer]);
  }
}

void Gpt2Model::head_forward(const UnitTensors& units) {
  const int64_t N = shape_.rows(), C = config_.hidden, V = config_.vocab_size;
  const auto act = MemoryCategory::activations;
  const UnitLayout& head = units_[head_unit()];
  const Tensor& hp = units.params[head_unit()];
  lnf_ = alloc_.allocate(N * C * sizeof(float), act, "ln_f output");
  lnf_mean_ = alloc_.allocate(N * sizeof(float), act, "ln_f mean");
  lnf_rstd_ = alloc_.allocate(N * sizeof(float), act, "ln_f rstd");
  be_.layernorm_forward(f32(lnf_, {N, C}), f32(lnf_mean_, {N}), f32(lnf_rstd_, {N}),
                        block_input(config_.n_layer), head.slice(hp, 0), head.slice(hp, 1),
                        config_.norm_eps);
  logits_ = alloc_.allocate(N * V * sizeof(float), act, "logits");
  Tensor wte = units_[0].slice(units.params[0], 0);
  be_.linear_forward(f32(logits_, {N, V}), f32(lnf_, {N, C}), wte, Tensor());
  if (!want_logits_) {
    be_.cross_entropy_fused(f32(logits_, {N, V}), f32(loss_sum_, {1}), targets_.as(DType::i32, {N}),
                            loss_scale_);
  }
}

void Gpt2Model::head_backward(const UnitTensors& units) {
  const int64_t N = shape_.rows(), C = config_.hidden, V = config_.vocab_size;
  const UnitLayout& head = units_[head_unit()];
  const Tensor& hp = units.params[head_unit()];
  const Tensor& hg = units.grads[head_unit()];
  Tensor wte = units_[0].slice(units.params[0], 0);
  Tensor dwte = units_[0].slice(units.grads[0], 0);
  Tensor dlogits = f32(logits_, {N, V});
  Tensor lnf = f32(lnf_, {N, C});
  stream_ = alloc_.allocate(N * C * sizeof(float), MemoryCategory::workspace, "residual gradient");
  Buffer dlnf_buf = alloc_.allocate(N * C * sizeof(float), MemoryCategory::workspace, "d ln_f");
  Tensor dlnf = f32(dlnf_buf, {N, C});
  be_.linear_backward(dlnf, false, dwte, Tensor(), dlogits, lnf, wte);
  Tensor stream = f32(stream_, {N, C});
  be_.fill(stream, 0.0f);
  be_.layernorm_backward(stream, head.slice(hg, 0), head.slice(hg, 1), dlnf,
                         block_input(config_.n_layer), head.slice(hp, 0), f32(lnf_mean_, {N}),
                         f32(lnf_rstd_, {N}));
  logits_.reset();
  lnf_.reset();
  lnf_mean_.reset();
  lnf_rstd_.reset();
}

void Gpt2Model::backward_unit(int unit, const UnitTensors& units) {
  LLMFT_REQUIRE(!want_logits_, "internal: backward after a logits-only forward");
  const int64_t N = shape_.rows(), C = config_.hidden;
  if (unit == head_unit()) {
    head_backward(units);
  } else if (unit == 0) {
    const UnitLayout& u = units_[0];
    be_.embedding_backward(u.slice(units.grads[0], 0), u.slice(units.grads[0], 1),
                           f32(stream_, {N, C}),
                           tokens_.as(DType::i32, {shape_.batch, shape_.seq_len}));
    embedding_out_.reset();
    stream_.reset();
  } else {
    const int layer = unit - 1;
    gpt2_block_backward(be_, alloc_, config_, shape_,
                        bind_gpt2_block(units_[unit], units.params[unit]),
                        bind_gpt2_block(units_[unit], units.grads[unit]), block_input(layer),
                        blocks_[layer], f32(stream_, {N, C}));
    blocks_[layer] = Gpt2BlockSaved();
  }
}

void Gpt2Model::end_micro_batch() {
  blocks_.clear();
  logits_.reset();
  lnf_.reset();
  lnf_mean_.reset();
  lnf_rstd_.reset();
  embedding_out_.reset();
  stream_.reset();
  tokens_.reset();
  targets_.reset();
}

double Gpt2Model::loss_sum() {
  float value = 0.0f;
  be_.copy_to_host(&value, f32(loss_sum_, {1}));
  return value;
}

void Gpt2Model::reset_loss() {
  be_.fill(f32(loss_sum_, {1}), 0.0f);
}

std::vector<float> Gpt2Model::last_logits() {
  LLMFT_REQUIRE(want_logits_ && !logits_.empty(), "internal: no logits kept");
  const int64_t V = config_.vocab_size, T = shape_.seq_len;
  std::vector<float> out(static_cast<size_t>(shape_.batch) * V);
  for (int b = 0; b < shape_.batch; ++b) {
    Tensor row = f32(logits_, {shape_.rows(), V}).view((b * T + T - 1) * V, {V});
    be_.copy_to_host(out.data() + b * V, row);
  }
  return out;
}

}  // namespace llmft
