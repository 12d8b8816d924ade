// Stored bf16/fp16 weights: the loss curve tracks fp32's over 50 steps on the bundled
// corpus, and fp16's loss scaling skips overflowing steps whole and recovers.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include <unistd.h>

#include "core/cpu/cpu_backend.h"
#include "core/model_factory.h"
#include "io/byte_tokenizer.h"
#include "io/data_loader.h"
#include "io/prepare.h"
#include "io/token_file.h"
#include "parallel/engine.h"

#include "tests/support/test_models.h"

using namespace llmft;
using testing::family_config;

namespace {

ModelConfig tiny(ModelFamily family) {
  const int inner = family == ModelFamily::llama ? 128 : 192;
  return family_config(family, {257, 64, 48, 2, 4, 0, inner});
}

std::vector<double> loss_curve(const ModelConfig& c, DType dtype, const io::TokenFile& data) {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  auto model = make_model(c, be, alloc);
  EngineOptions o;
  o.dtype = dtype;
  o.schedule = LrSchedule{LrShape::cosine, 2e-3f, 2e-4f, 5, 50};
  o.clip_grad = 1.0f;
  o.loss_scale = LossScaleConfig{dtype == DType::f16, 1024.0f, 10};
  Engine engine(*model, be, alloc, o);
  io::DataLoader loader(data, 64, 3);
  std::vector<double> losses;
  for (int step = 1; step <= 50; ++step) {
    io::Batch b = loader.rows(loader.global_batch(step, 4), 0, 4);
    StepStats s = engine.train_step({MicroBatch{4, 64, b.inputs.data(), b.targets.data()}}, step);
    losses.push_back(s.loss);
  }
  return losses;
}

}  // namespace

TEST_CASE("bf16 and fp16 weights track the fp32 loss curve over 50 steps") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("llmft_precision_" + std::to_string(getpid()));
  fs::create_directories(dir);
  io::ByteTokenizer tok;
  io::prepare_token_file(std::string(LLMFT_SOURCE_DIR) + "/examples/data/val.txt",
                         (dir / "data.tok").string(), tok);
  io::TokenFile data((dir / "data.tok").string());
  for (ModelFamily family : {ModelFamily::gpt2, ModelFamily::llama}) {
    const ModelConfig c = tiny(family);
    const std::vector<double> f32 = loss_curve(c, DType::f32, data);
    CHECK(f32.back() < 0.75 * f32.front());  // it learns (behaviour, not rounding)
    for (DType dtype : {DType::bf16, DType::f16}) {
      const std::vector<double> low = loss_curve(c, dtype, data);
      double worst = 0, mean = 0;
      size_t worst_step = 0;
      for (size_t i = 0; i < f32.size(); ++i) {
        const double gap = std::fabs(low[i] - f32[i]) / f32[i];
        mean += gap / static_cast<double>(f32.size());
        if (gap > worst) worst = gap, worst_step = i + 1;
      }
      MESSAGE(std::string(family_name(family))
              << " " << std::string(dtype_name(dtype)) << ": final loss " << low.back()
              << " vs fp32 " << f32.back() << "; relative gap mean " << mean << ", worst " << worst
              << " at step " << worst_step);
      // bf16 keeps 8 mantissa bits, fp16 11: the weights round to those after every step,
      // so the curves drift apart a little while the loss falls fast, and rejoin
      // (measured: mean gaps 0.16% bf16 and 0.05% fp16 for GPT-2, 0.015% and 0.002% for
      // LLaMA). The bounds are 10x and more above those; the BLAS kernel's order of
      // addition (~1e-7) is far below both.
      CHECK(mean < (dtype == DType::bf16 ? 0.02 : 0.01));
      CHECK(std::fabs(low.back() - f32.back()) < 0.01 * f32.back());
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("fp16 overflow skips the whole step, halves the scale, and the scale grows back") {
  const ModelConfig c = tiny(ModelFamily::llama);
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  auto model = make_model(c, be, alloc);
  EngineOptions o;
  o.dtype = DType::f16;
  // fp16 gradient sums, which overflow where fp16 does (an f32 sum would take scales up
  // to f32's range before the first clean step).
  o.optimizer.grad_accum_dtype = GradAccumDtype::stored;
  o.schedule = LrSchedule{LrShape::constant, 1e-3f, 0.0f, 0, 10};
  // A scale far beyond fp16's range makes the gradients overflow to inf.
  o.loss_scale = LossScaleConfig{true, 1e30f, 2};
  Engine engine(*model, be, alloc, o);
  std::vector<int32_t> inputs(2 * 16), targets(2 * 16);
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = static_cast<int32_t>((i * 7) % 257);
    targets[i] = static_cast<int32_t>((i * 11 + 3) % 257);
  }
  const MicroBatch batch{2, 16, inputs.data(), targets.data()};
  std::vector<std::vector<float>> before;
  for (size_t u = 0; u < model->units().size(); ++u) {
    before.push_back(engine.read_params(static_cast<int>(u)));
  }
  StepStats s = engine.train_step({batch}, 1);
  CHECK(s.skipped);
  CHECK_FALSE(std::isfinite(s.grad_norm));
  CHECK(engine.loss_scale() == 5e29f);
  for (size_t u = 0; u < before.size(); ++u) {
    CHECK(engine.read_params(static_cast<int>(u)) == before[u]);  // no partial update
  }
  // Halve until the gradients fit, then two clean steps double the scale.
  int step = 2;
  while (engine.train_step({batch}, step++).skipped) REQUIRE(step < 200);
  const float fitted = engine.loss_scale();
  CHECK(fitted < 65504.0f * 65504.0f);
  engine.train_step({batch}, step++);
  CHECK(engine.loss_scale() == 2 * fitted);
}
