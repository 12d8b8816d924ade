// bench_data_parallel: data-parallel training steps under mpirun, for weak scaling (the
// same micro-batch per rank; bench/weak_scaling.sh compares 1 rank x 2 threads with 2
// ranks x 1 thread). Prints ms/step, global tokens/s, and how much of DDP's gradient
// all-reduce compute hid: the all-reduce time measured alone in the same run, against the
// time the step still waited for it after backward.
//
// usage: mpirun -np N bench_data_parallel [--model gpt2] [--batch 2] [--seq 64]
//                                         [--steps 4] [--threads 1]
#include <mpi.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "bench/bench_args.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_runtime.h"
#include "core/backend_registry.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"
#include "parallel/flops.h"

using namespace llmft;

namespace {

using bench::Clock;
using bench::seconds_since;

int run(int argc, char** argv) {
  std::map<std::string, std::string> args = {
      {"model", "gpt2"}, {"batch", "2"}, {"seq", "64"}, {"steps", "4"}, {"threads", "1"}};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    LLMFT_REQUIRE(key.rfind("--", 0) == 0 && args.count(key.substr(2)),
                  "unknown argument " << key << " (see the header of bench/data_parallel.cpp)");
    args[key.substr(2)] = argv[i + 1];
  }
  const ModelConfig c = io::resolve_model(args["model"]);
  const int B = std::stoi(args["batch"]), T = std::stoi(args["seq"]),
            steps = std::stoi(args["steps"]);
  int ranks = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::unique_ptr<MpiCommunicator> world;
  if (ranks > 1) world = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, 600);

  auto backend = make_backend("cpu");
  backend->set_threads(std::stoi(args["threads"]));
  Allocator alloc(backend->memory(), 0);
  auto model = make_model(c, *backend, alloc);
  EngineOptions o;
  o.data_parallel = world.get();
  o.schedule = LrSchedule{LrShape::constant, 1e-4f, 0.0f, 0, steps + 1};
  Engine engine(*model, *backend, alloc, o);
  std::mt19937_64 rng(1 + rank);
  std::vector<int32_t> tokens(static_cast<size_t>(B) * T);
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % c.vocab_size);
  const MicroBatch batch{B, T, tokens.data(), tokens.data()};

  engine.train_step({batch}, 1);  // warm-up
  double step_seconds = 0, exposed = 0;
  for (int s = 2; s <= steps + 1; ++s) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    const StepStats stats = engine.train_step({batch}, s);
    step_seconds += seconds_since(start) / steps;
    exposed += stats.exposed_comm_seconds / steps;
  }
  // The same all-reduces alone: every unit's gradient, blocking, nothing to hide behind.
  double alone = 0;
  if (world) {
    std::vector<Buffer> grads;
    for (const UnitLayout& u : model->units()) {
      grads.push_back(alloc.allocate(static_cast<size_t>(u.numel) * 4, MemoryCategory::grads, "g"));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    for (size_t u = 0; u < grads.size(); ++u) {
      world->all_reduce(grads[u].as(DType::f32, {model->units()[u].numel}), ReduceOp::sum)->wait();
    }
    alone = seconds_since(start);
  }
  if (rank == 0) {
    const Throughput throughput = step_throughput(static_cast<double>(B) * T * ranks, step_seconds,
                                                  training_flops_per_token(c, T), ranks, 0);
    std::printf("ranks %d x threads %s: %.1f ms/step, %.1f tokens/s (global, %.1f per rank)", ranks,
                args["threads"].c_str(), step_seconds * 1e3, throughput.tokens_per_s,
                throughput.tokens_per_s_per_device);
    if (world) {
      std::printf(
          "; gradient all-reduce alone %.1f ms, still waited %.1f ms after backward: "
          "%.0f%% hidden",
          alone * 1e3, exposed * 1e3, alone > 0 ? 100.0 * (1.0 - exposed / alone) : 0.0);
    }
    std::printf("\ntokens_per_s=%.3f\n", throughput.tokens_per_s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MpiRuntime mpi(&argc, &argv);
  return guarded_main("bench_data_parallel", run, argc, argv);
}
