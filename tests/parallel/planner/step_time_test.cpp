// The time model: ring collective costs, the tensor-parallel all-reduce volume, and
// sanity — faster links and faster devices never make a step slower, and only what
// compute cannot hide is exposed. Everything here is double arithmetic on formulas, the
// same on every machine: a plain Approx absorbs only the rounding of a few operations;
// epsilon(0.01) marks a check that leaves out a term the model adds, under 1% here (the
// optimizer's elementwise update beside 6.7e9 x 32k GEMM FLOPs).
#include <doctest/doctest.h>

#include <cstring>

#include "parallel/flops.h"
#include "parallel/planner/step_collectives.h"
#include "parallel/planner/step_time.h"

using namespace llmft;

namespace {

Workload llama_7b() {
  Workload w;
  w.model = preset_config("llama-7b");
  w.dtype = DType::bf16;
  w.seq_len = 1024;
  w.global_batch = 32;
  return w;
}

// `link` with every collective's bandwidth times `bandwidth` and latency times `latency`.
Link scaled(Link link, double bandwidth, double latency) {
  for (const Collective op : kLinkCollectives) {
    link.rate(op).bandwidth *= bandwidth;
    link.rate(op).latency_s *= latency;
  }
  return link;
}

double bytes_of(const std::vector<CollectiveCall>& calls, const char* what) {
  for (const CollectiveCall& c : calls) {
    if (std::strcmp(c.what, what) == 0) return c.bytes * c.count;
  }
  return 0;
}

}  // namespace

TEST_CASE("ring collectives: 2(n-1)/n bytes for an all-reduce, (n-1)/n for the others") {
  CHECK(ring_bytes(Collective::all_reduce, 800, 8) == doctest::Approx(1400));
  CHECK(ring_bytes(Collective::reduce_scatter, 800, 8) == doctest::Approx(700));
  CHECK(ring_bytes(Collective::all_gather, 800, 8) == doctest::Approx(700));
  CHECK(ring_bytes(Collective::all_reduce, 800, 1) == 0);
  const Link link = uniform_link(100, 0.5);
  // 1400 / 100 s of bandwidth + 3 pieces x 2(8-1) steps x 0.5 s of latency.
  CHECK(collective_seconds(Collective::all_reduce, 800, 3, 8, link) == doctest::Approx(14 + 21));
  CHECK(collective_seconds(Collective::all_gather, 800, 1, 8, link) == doctest::Approx(7 + 3.5));
}

TEST_CASE("tensor parallelism: 2 all-reduces forward and 2 backward per block") {
  const Workload w = llama_7b();
  Layout l{4, 8, 0, 2, 4, false};
  const double activation = 2.0 * 1024 * 4096 * 4;  // micro_batch x seq x hidden x f32
  const double blocks = 32, micro_batches = 4;
  CHECK(bytes_of(step_collectives(w, l, ComputeRule::f32), "block all-reduces") ==
        doctest::Approx(4 * blocks * micro_batches * activation));
  // Checkpointing recomputes each block's forward, and its 2 all-reduces.
  l.checkpointed_blocks = 32;
  CHECK(bytes_of(step_collectives(w, l, ComputeRule::f32), "block all-reduces") ==
        doctest::Approx(6 * blocks * micro_batches * activation));
  // The vocab-parallel cross-entropy reduces 3 floats per token, in 2 all-reduces.
  CHECK(bytes_of(step_collectives(w, l, ComputeRule::f32), "cross-entropy row maxima") +
            bytes_of(step_collectives(w, l, ComputeRule::f32),
                     "cross-entropy exp-sums and target logits") ==
        doctest::Approx(3 * micro_batches * 2 * 1024 * 4));
  // No tensor parallelism, no tensor-parallel traffic.
  l.tp = 1;
  CHECK(bytes_of(step_collectives(w, l, ComputeRule::f32), "block all-reduces") == 0);
}

TEST_CASE("data parallelism: DDP all-reduces the stored gradients, ZeRO-3 gathers weights twice") {
  const Workload w = llama_7b();
  const double psi = static_cast<double>(parameter_count(w.model));
  const std::vector<CollectiveCall> ddp =
      step_collectives(w, Layout{8, 1, 0, 4, 1, false}, ComputeRule::f32);
  CHECK(bytes_of(ddp, "gradient all-reduces") == doctest::Approx(2 * psi));  // bf16
  const std::vector<CollectiveCall> zero3 =
      step_collectives(w, Layout{8, 1, 3, 2, 2, false}, ComputeRule::f32);
  CHECK(bytes_of(zero3, "weight all-gathers (forward)") == doctest::Approx(2 * 2 * psi));
  CHECK(bytes_of(zero3, "weight all-gathers (backward)") == doctest::Approx(2 * 2 * psi));
  CHECK(bytes_of(zero3, "gradient reduce-scatters") == doctest::Approx(2 * 4 * psi));  // f32
  // A GPU computes in bf16: its transient gradients move half the bytes.
  const std::vector<CollectiveCall> gpu =
      step_collectives(w, Layout{8, 1, 3, 2, 2, false}, ComputeRule::stored);
  CHECK(bytes_of(gpu, "gradient reduce-scatters") == doctest::Approx(2 * 2 * psi));
  CHECK(bytes_of(gpu, "weight all-gathers (forward)") == doctest::Approx(2 * 2 * psi));
}

TEST_CASE("an offloaded optimizer reduces every micro-batch and updates on the host") {
  const Workload w = llama_7b();  // AdamW, bf16, no clipping: updates during backward
  const double psi = static_cast<double>(parameter_count(w.model));
  const Layout plain{8, 1, 1, 2, 2, 0, false}, offloaded{8, 1, 1, 2, 2, 0, true};
  // ZeRO-1 reduce-scatters the stored bf16 sums once; offloaded, each micro-batch's.
  CHECK(bytes_of(step_collectives(w, plain, ComputeRule::stored), "gradient reduce-scatters") ==
        doctest::Approx(2 * psi));
  CHECK(bytes_of(step_collectives(w, offloaded, ComputeRule::stored), "gradient reduce-scatters") ==
        doctest::Approx(2 * 2 * psi));
  const DeviceDescription d = device_preset("a100-80g");
  const StepTime on_device = predict_step_time(w, plain, d);
  const StepTime host = predict_step_time(w, offloaded, d);
  CHECK(on_device.host_s == 0);
  // The copies are never hidden: this rank's eighth of the gradients out per micro-batch
  // (bf16) and of the weights in. The host's adds and update hide behind the backward
  // passes as far as they last: with a host fast enough, only the copies remain; at the
  // preset's 20 GB/s AdamW's 30 bytes per element outlast them (ZeRO-Offload's finding).
  const double copies = psi / 8 * (2 * 2 + 2) / d.host_link_bandwidth;
  CHECK(host.host_s > copies);
  DeviceDescription fast_host = d;
  fast_host.host_update_bandwidth *= 1000;
  CHECK(predict_step_time(w, offloaded, fast_host).host_s == doctest::Approx(copies));
  CHECK(host.compute_s < on_device.compute_s);  // the update left the device
  DeviceDescription slow_link = d;
  slow_link.host_link_bandwidth /= 2;
  CHECK(predict_step_time(w, offloaded, slow_link).total_s > host.total_s);
}

TEST_CASE("LOMO's norm pass: clipping or fp16 costs a second backward") {
  Workload w = llama_7b();
  w.optimizer.kind = OptimizerKind::lomo;
  CHECK(backward_passes(w) == 1);
  const Layout l{1, 1, 0, 4, 1, false};
  const DeviceDescription d = device_preset("a100-80g");
  const double one = predict_step_time(w, l, d).compute_s;
  w.clip_grad = true;
  CHECK(backward_passes(w) == 2);
  const double two = predict_step_time(w, l, d).compute_s;
  // Forward 1/3 and backward 2/3 of the step's FLOPs: a second backward adds 2/3.
  CHECK(two / one == doctest::Approx(5.0 / 3.0).epsilon(0.01));
  w.clip_grad = false;
  w.dtype = DType::f16;
  CHECK(backward_passes(w) == 2);
}

TEST_CASE("compute: the step's FLOPs over the achieved rate, split by tensor parallelism") {
  const Workload w = llama_7b();
  DeviceDescription d = device_preset("a100-80g");
  const Layout l{1, 1, 0, 32, 1, false};
  const double rows = 32.0 * 1024;
  const double flops = training_flops_per_token(w.model, w.seq_len) * rows;
  auto efficiency = [](double rows, double columns) {
    return rows / (rows + 32) * columns / (columns + 32);  // small GEMMs run slower
  };
  const double rate = d.peak_flops * d.achieved_fraction * efficiency(rows, 4096);
  const StepTime t = predict_step_time(w, l, d);
  // The rest is AdamW's elementwise update.
  CHECK(t.compute_s == doctest::Approx(flops / rate).epsilon(0.01));
  CHECK(t.comm_s == 0);
  CHECK(t.total_s == t.compute_s);
  const StepTime split = predict_step_time(w, Layout{1, 8, 0, 32, 1, false}, d);
  const double narrower = efficiency(rows, 4096) / efficiency(rows, 4096 / 8);
  CHECK(split.compute_s == doctest::Approx(t.compute_s / 8 * narrower).epsilon(0.01));
}

TEST_CASE("more bandwidth, lower latency or more FLOP/s never make a step slower") {
  Workload w = llama_7b();
  for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::lomo}) {
    w.optimizer.kind = kind;
    for (int world : {8, 32}) {
      for (int tp : {1, 2, 8}) {
        for (int zero = 0; zero <= 3; ++zero) {
          for (bool checkpointing : {false, true}) {
            const int dp = world / tp;
            const int micro_batch = w.global_batch / dp;
            const Layout l{dp, tp, zero, micro_batch, 1, checkpointing};
            CAPTURE(world);
            CAPTURE(tp);
            CAPTURE(zero);
            const DeviceDescription base = device_preset("a100-80g");
            const StepTime t = predict_step_time(w, l, base);
            CHECK(t.exposed_comm_s <= t.comm_s);
            CHECK(t.total_s == doctest::Approx(t.compute_s + t.exposed_comm_s));
            DeviceDescription faster = base;
            faster.intra_node = scaled(base.intra_node, 2, 1);
            CHECK(predict_step_time(w, l, faster).total_s <= t.total_s);
            faster.inter_node = scaled(base.inter_node, 2, 1);
            CHECK(predict_step_time(w, l, faster).total_s <= t.total_s);
            faster.intra_node = scaled(faster.intra_node, 1, 0.5);
            faster.inter_node = scaled(faster.inter_node, 1, 0.5);
            CHECK(predict_step_time(w, l, faster).total_s <= t.total_s);
            faster.peak_flops *= 2;
            CHECK(predict_step_time(w, l, faster).compute_s < t.compute_s);
          }
        }
      }
    }
  }
}

TEST_CASE("DDP hides its gradient all-reduce behind backward; a node boundary slows it") {
  const Workload w = llama_7b();
  const DeviceDescription d = device_preset("a100-80g");
  const StepTime one_node = predict_step_time(w, Layout{8, 1, 0, 4, 1, false}, d);
  CHECK(one_node.exposed_comm_s < one_node.comm_s);
  const StepTime two_nodes = predict_step_time(w, Layout{16, 1, 0, 2, 1, false}, d);
  CHECK(two_nodes.comm_s > one_node.comm_s);  // InfiniBand, not NVLink
}

TEST_CASE("each collective is priced at its own link rate, measured apart") {
  const Workload w = llama_7b();
  const DeviceDescription d = device_preset("a100-80g");
  DeviceDescription slow_reduce_scatter = d;
  slow_reduce_scatter.intra_node.reduce_scatter.bandwidth /= 2;
  // DDP all-reduces only: a slower reduce-scatter changes nothing.
  const Layout ddp{8, 1, 0, 4, 1, false};
  CHECK(predict_step_time(w, ddp, slow_reduce_scatter).comm_s ==
        predict_step_time(w, ddp, d).comm_s);
  // ZeRO-2 reduce-scatters its gradients: at half the bandwidth each costs its ring bytes
  // over the bandwidth once more; its all-gathers keep their rate.
  const Layout zero2{8, 1, 2, 4, 1, false};
  double extra = 0;
  for (const CollectiveCall& c : step_collectives(w, zero2, d.compute)) {
    if (c.op != Collective::reduce_scatter) continue;
    extra += c.count * ring_bytes(c.op, c.bytes, zero2.dp) / d.intra_node.reduce_scatter.bandwidth;
  }
  REQUIRE(extra > 0);
  CHECK(predict_step_time(w, zero2, slow_reduce_scatter).comm_s -
            predict_step_time(w, zero2, d).comm_s ==
        doctest::Approx(extra));
}
