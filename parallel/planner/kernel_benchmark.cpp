#include "parallel/planner/kernel_benchmark.h"

#include <algorithm>
#include <functional>

#include "core/compute_dtype.h"
#include "core/rope_frequencies.h"
#include "parallel/planner/benchmark_tools.h"

namespace llmft {
namespace {

double bytes_of(std::initializer_list<Tensor> tensors) {
  double bytes = 0;
  for (const Tensor& t : tensors) bytes += t.defined() ? static_cast<double>(t.bytes()) : 0;
  return bytes;
}

}  // namespace

std::array<double, kKernelKinds> measure_kernel_rates(Backend& backend, Allocator& allocator,
                                                      Communicator* world, const ModelConfig& model,
                                                      int seq_len, DType stored,
                                                      OptimizerKind optimizer) {
  const DType dt = compute_dtype(backend.compute_rule(), stored);
  const int64_t rows = std::clamp(seq_len, 16, 2048), C = model.hidden, I = model.intermediate;
  const int64_t V = model.vocab_size, logit_rows = std::min<int64_t>(rows, 64);
  const int64_t width = (model.n_head + 2 * model.n_kv_head) * model.head_dim();
  const bool llama = model.family == ModelFamily::llama;
  BenchmarkTensors t(backend, allocator);
  std::array<double, kKernelKinds> rates{};
  // Rate of `run`, whose calls the tally counts as `bytes`, on the slowest rank.
  auto measure = [&](KernelKind kind, double bytes, const std::function<void()>& run) {
    const double seconds = slowest_seconds(backend, allocator, world, run, 5);
    rates[static_cast<int>(kind)] = bytes / std::max(seconds, 1e-12);
  };

  const Tensor a = t.make(dt, {rows, C}), b = t.make(dt, {rows, C}), c = t.make(dt, {rows, C});
  measure(KernelKind::copy, bytes_of({a, b}), [&] { backend.copy(a, b); });
  measure(KernelKind::add, bytes_of({a, b}), [&] { backend.add_inplace(a, b); });

  const Tensor token_positions = t.stream_positions(rows);
  const Tensor weight = t.make(dt, {C}, 1.0f), dweight = t.make(dt, {C});
  const Tensor mean = t.make(DType::f32, {rows}), rstd = t.make(DType::f32, {rows}, 1.0f);
  if (llama) {
    measure(KernelKind::norm,
            bytes_of({c, rstd, a, weight}) + bytes_of({b, dweight, c, a, weight, rstd}), [&] {
              backend.rmsnorm_forward(c, rstd, a, weight, model.norm_eps);
              backend.rmsnorm_backward(b, dweight, c, a, weight, rstd);
            });
    const Tensor qkv = t.make(dt, {1, rows, width});
    const RopeFrequencies freqs = rope_frequencies(model);
    measure(KernelKind::rope, 2 * bytes_of({qkv, token_positions}), [&] {
      backend.rope_forward(qkv, token_positions, model.n_head, model.n_kv_head, freqs);
      backend.rope_backward(qkv, token_positions, model.n_head, model.n_kv_head, freqs);
    });
    const Tensor gate_up = t.make(dt, {rows, 2 * I}), out = t.make(dt, {rows, I});
    const Tensor dgate_up = t.make(dt, {rows, 2 * I});
    measure(KernelKind::activation, bytes_of({out, gate_up}) + bytes_of({dgate_up, gate_up, out}),
            [&] {
              backend.swiglu_forward(out, gate_up);
              backend.swiglu_backward(dgate_up, gate_up, out);
            });
  } else {
    const Tensor bias = t.make(dt, {C}), dbias = t.make(dt, {C});
    measure(KernelKind::norm,
            bytes_of({c, mean, rstd, a, weight, bias}) +
                bytes_of({b, dweight, dbias, c, a, weight, mean, rstd}),
            [&] {
              backend.layernorm_forward(c, mean, rstd, a, weight, bias, model.norm_eps);
              backend.layernorm_backward(b, dweight, dbias, c, a, weight, mean, rstd);
            });
    const Tensor inp = t.make(dt, {rows, I}), out = t.make(dt, {rows, I});
    const Tensor dinp = t.make(dt, {rows, I});
    measure(KernelKind::activation, bytes_of({out, inp}) + bytes_of({dinp, inp, out}), [&] {
      backend.gelu_forward(out, inp);
      backend.gelu_backward(dinp, inp, out);
    });
  }

  const Tensor tokens = t.make(DType::i32, {1, rows});
  const Tensor table = t.make(dt, {V, C}), dtable = t.make(dt, {V, C});
  const Tensor positions = llama ? Tensor() : t.make(dt, {rows, C});
  const Tensor dpositions = llama ? Tensor() : t.make(dt, {rows, C});
  measure(KernelKind::embedding,
          bytes_of({c, tokens, token_positions, positions}) +
              bytes_of({b, tokens, token_positions, dpositions}),
          [&] {
            backend.embedding_forward(c, tokens, token_positions, table, positions, 0);
            backend.embedding_backward(dtable, dpositions, b, tokens, token_positions, 0);
          });

  const Tensor logits = t.make(dt, {logit_rows, V}), stats = t.make(DType::f32, {3, logit_rows});
  const Tensor targets = t.make(DType::i32, {logit_rows}), loss = t.make(DType::f32, {1});
  measure(KernelKind::cross_entropy,
          bytes_of({stats, logits}) + bytes_of({stats, logits, targets}) +
              bytes_of({logits, loss, stats, targets}),
          [&] {
            backend.cross_entropy_max(stats, logits, V);
            backend.cross_entropy_sums(stats, logits, targets, 0, V);
            backend.cross_entropy_finish(logits, loss, stats, targets, 0, V, 1.0f);
          });

  constexpr int64_t kParameters = 1 << 20;
  const Tensor param = t.make(DType::f32, {kParameters}), grad = t.make(dt, {kParameters});
  const Tensor sum = t.make(DType::f32, {1});
  measure(KernelKind::reduction, bytes_of({sum, grad}), [&] { backend.sum_squares(sum, grad); });
  if (optimizer == OptimizerKind::adamw) {
    const Tensor m = t.make(DType::f32, {kParameters}), v = t.make(DType::f32, {kParameters});
    measure(KernelKind::optimizer, bytes_of({param, grad, m, v}), [&] {
      backend.adamw_update(param, grad, m, v, 1e-9f, 0.9f, 0.95f, 1e-8f, 0.0f, 1.0f, 0.1f, 0.05f);
    });
  } else if (optimizer != OptimizerKind::adalomo) {
    measure(KernelKind::optimizer, bytes_of({param, grad}),
            [&] { backend.sgd_update(param, grad, Tensor(), 1e-9f, 0.0f, 0.0f, 1.0f); });
  }
  return rates;
}

}  // namespace llmft
