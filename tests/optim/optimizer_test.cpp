// AdamW and SGD updates against a scalar double-precision reference written here, and
// the learning-rate schedules and clipping factor against their definitions.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "core/cpu/cpu_backend.h"
#include "optim/grad_clip.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"

using namespace llmft;

namespace {

UnitLayout two_param_unit() {
  UnitLayout u;
  u.name = "unit";
  ParamInfo w{"w", {3, 2}};
  w.weight_decay = true;
  u.add(w);
  u.add(ParamInfo{"b", {2}});
  return u;
}

}  // namespace

TEST_CASE("AdamW matches a reference implementation over several steps") {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  UnitLayout u = two_param_unit();
  OptimizerConfig cfg;
  cfg.beta1 = 0.8f;
  cfg.beta2 = 0.9f;
  cfg.eps = 1e-6f;
  cfg.weight_decay = 0.1f;
  auto opt = make_optimizer(cfg, be, alloc, {u}, {whole(u)});
  CHECK(alloc.current(MemoryCategory::optimizer_state) == 2 * rounded_allocation(8 * 4));
  std::mt19937_64 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> p(8), g(8);
  for (float& x : p) x = normal(rng);
  std::vector<double> ref(p.begin(), p.end()), m(8, 0.0), v(8, 0.0);
  const float lr = 0.05f, scale = 0.5f;
  for (int step = 1; step <= 4; ++step) {
    for (float& x : g) x = normal(rng);
    opt->begin_step(step);
    opt->update_unit(0, u, whole(u), Tensor(p.data(), DType::f32, {8}),
                     Tensor(g.data(), DType::f32, {8}), lr, scale);
    for (int i = 0; i < 8; ++i) {
      const double wd = i < 6 ? cfg.weight_decay : 0.0;
      const double grad = static_cast<double>(g[i]) * scale;
      m[i] = cfg.beta1 * m[i] + (1 - cfg.beta1) * grad;
      v[i] = cfg.beta2 * v[i] + (1 - cfg.beta2) * grad * grad;
      const double mhat = m[i] / (1 - std::pow(cfg.beta1, step));
      const double vhat = v[i] / (1 - std::pow(cfg.beta2, step));
      ref[i] = ref[i] * (1 - lr * wd) - lr * mhat / (std::sqrt(vhat) + cfg.eps);
    }
    for (int i = 0; i < 8; ++i) CHECK(p[i] == doctest::Approx(ref[i]).epsilon(1e-5));
  }
}

TEST_CASE("SGD with momentum matches torch.optim.SGD's definition") {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  UnitLayout u = two_param_unit();
  OptimizerConfig cfg;
  cfg.kind = OptimizerKind::sgd;
  cfg.momentum = 0.9f;
  cfg.weight_decay = 0.01f;
  auto opt = make_optimizer(cfg, be, alloc, {u}, {whole(u)});
  std::vector<float> p(8, 1.0f), g(8);
  std::vector<double> ref(8, 1.0), buf(8, 0.0);
  for (int step = 1; step <= 3; ++step) {
    for (int i = 0; i < 8; ++i) g[i] = 0.1f * (i + step);
    opt->begin_step(step);
    opt->update_unit(0, u, whole(u), Tensor(p.data(), DType::f32, {8}),
                     Tensor(g.data(), DType::f32, {8}), 0.1f, 1.0f);
    for (int i = 0; i < 8; ++i) {
      const double wd = i < 6 ? cfg.weight_decay : 0.0;
      buf[i] = cfg.momentum * buf[i] + g[i];
      ref[i] = ref[i] * (1 - 0.1 * wd) - 0.1 * buf[i];
      // f32 against double: four roundings a step on values of size ~1, three steps:
      // at most ~12 u = 7e-7 relative.
      CHECK(p[i] == doctest::Approx(ref[i]).epsilon(1e-6));
    }
  }
}

TEST_CASE("plain SGD keeps no state") {
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  OptimizerConfig cfg;
  cfg.kind = OptimizerKind::sgd;
  const UnitLayout u = two_param_unit();
  auto opt = make_optimizer(cfg, be, alloc, {u}, {whole(u)});
  CHECK(alloc.current(MemoryCategory::optimizer_state) == 0);
}

// The schedule is f32 arithmetic on a few operands; Approx's default margin (100 f32 ulps)
// covers rounding the literals and std::cos.
TEST_CASE("learning-rate schedules: warmup, then constant, cosine or linear decay") {
  LrSchedule s{LrShape::cosine, 1.0f, 0.1f, 10, 110};
  CHECK(s.at(1) == doctest::Approx(0.1f));
  CHECK(s.at(10) == doctest::Approx(1.0f));
  CHECK(s.at(11) == doctest::Approx(1.0f));   // the first step after warmup is at the peak
  CHECK(s.at(61) == doctest::Approx(0.55f));  // halfway through the decay
  CHECK(s.at(110) > 0.1f);                    // the last step still trains
  CHECK(s.at(110) == doctest::Approx(0.1f + 0.9f * 0.5f * (1 + std::cos(3.14159265f * 0.99f))));
  s.shape = LrShape::linear;
  CHECK(s.at(36) == doctest::Approx(1.0f - 0.9f * 0.25f));
  s.shape = LrShape::constant;
  CHECK(s.at(100) == doctest::Approx(1.0f));
}

TEST_CASE("clipping scales the global norm down to the limit and never up") {
  CHECK(clip_factor(10.0, 1.0f) == doctest::Approx(0.1).epsilon(1e-6));  // one f32 division
  CHECK(clip_factor(0.5, 1.0f) == 1.0f);
  CHECK(clip_factor(10.0, 0.0f) == 1.0f);
}
