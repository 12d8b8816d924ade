// --grad-accum-dtype under mpiexec (-n 2 and -n 4): with bf16 weights, 8 micro-batches per
// rank and every ZeRO stage, with the optimizer on the device and offloaded, the gradient
// SGD applies meets an fp64 sum of the same micro-batches' f32 gradients to f32 rounding
// with fp32 sums, and is far off with stored (bf16) ones. The applied gradient is read from
// the f32 master weights: one SGD step at learning rate 1 moves them by exactly it, up to
// the rounding of the new master. Checks are CHECKs so that every rank enters every
// collective (see tests/support/mpi_doctest_main.cpp).
#include <doctest/doctest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/mpi_communicator.h"
#include "tests/support/gradient_reference.h"

using namespace llmft;
using testing::family_config;

namespace {

constexpr int kPerRank = 8;
// One window of 16 tokens per micro-batch, every position a target: a micro-batch's share
// of the step's gradient is its own gradient / (micro-batches of all ranks), a power of two
// with 2 or 4 ranks, so the scaling is exact.
constexpr int kSeq = 16;

// The norm-relative error of the gradient one step applied, beyond what reading it from the
// masters can add: new master = fl(old - 1 x g) is off by at most half an ulp, 2^-24 of
// its size, and that much of each element's error is not counted.
double applied_gradient_error(const std::vector<float>& before, const std::vector<float>& after,
                              const std::vector<double>& reference) {
  double excess = 0, norm = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double applied = static_cast<double>(before[i]) - after[i];
    const double reading = std::ldexp(std::fabs(static_cast<double>(after[i])), -24);
    const double beyond = std::max(0.0, std::fabs(applied - reference[i]) - reading);
    excess += beyond * beyond;
    norm += reference[i] * reference[i];
  }
  return std::sqrt(excess / norm);
}

}  // namespace

TEST_CASE("fp32 gradient sums meet fp64 under every ZeRO stage and offload; bf16 ones do not") {
  MpiCommunicator world(MPI_COMM_WORLD, 60);
  // GPT-2 ties its embeddings (two uses per micro-batch add into one gradient).
  const ModelConfig c = family_config(ModelFamily::gpt2, {97, kSeq, 32, 2, 4, 0, 64});
  const testing::WindowBatches b =
      testing::random_windows(c.vocab_size, kPerRank * world.size(), kSeq);
  const std::vector<MicroBatch>& all = b.micro_batches;
  const std::vector<double> reference = testing::reference_gradient(c, all);
  const std::vector<MicroBatch> mine(all.begin() + kPerRank * world.rank(),
                                     all.begin() + kPerRank * (world.rank() + 1));
  for (bool offload : {false, true}) {
    for (int zero = 0; zero <= 3; ++zero) {
      double errors[2] = {0, 0};
      for (GradAccumDtype accum : {GradAccumDtype::fp32, GradAccumDtype::stored}) {
        EngineOptions o = testing::bf16_sgd(accum, 1.0f);
        o.data_parallel = &world;
        o.zero_stage = zero;
        testing::TestTrainer t(c, o, 0, 1, {}, nullptr, 0, offload);
        const std::vector<float> before = testing::all_params(*t.engine);
        t.engine->train_step(mine, 1);
        errors[accum == GradAccumDtype::stored] =
            applied_gradient_error(before, testing::all_params(*t.engine), reference);
      }
      CAPTURE(zero);
      CAPTURE(offload);
      if (world.rank() == 0) {
        MESSAGE(world.size() << " ranks, ZeRO-" << zero << std::string(offload ? ", offloaded" : "")
                             << ": error against fp64 " << errors[0] << " fp32, " << errors[1]
                             << " stored");
      }
      // As in grad_accum_dtype_test.cpp: f32's 24 bits over the sum of the micro-batches
      // (31 additions there; here also the reduction over up to 4 ranks, and the same 32
      // terms in all) and their own products stay far under 2e-5 of the gradient.
      CHECK(errors[0] < 2e-5);
      // bf16 sums round each addition to 8 bits; an offloaded optimizer sums on the host
      // in f32 whatever the option says.
      if (offload) {
        CHECK(errors[1] < 2e-5);
      } else {
        CHECK(errors[1] > 100 * errors[0]);
      }
    }
  }
}
