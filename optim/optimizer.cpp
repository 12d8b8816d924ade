#include "optim/optimizer.h"

#include "core/error.h"
#include "optim/adamw.h"
#include "optim/sgd.h"

namespace llmft {

OptimizerKind parse_optimizer_kind(const std::string& name) {
  if (name == "sgd") return OptimizerKind::sgd;
  if (name == "adamw") return OptimizerKind::adamw;
  LLMFT_FAIL("--optimizer " << name << ": unknown optimizer; use sgd or adamw");
}

const char* optimizer_kind_name(OptimizerKind kind) {
  return kind == OptimizerKind::sgd ? "sgd" : "adamw";
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, Backend& backend,
                                          Allocator& allocator,
                                          const std::vector<UnitLayout>& units) {
  if (config.kind == OptimizerKind::sgd) {
    return std::make_unique<Sgd>(config, backend, allocator, units);
  }
  return std::make_unique<AdamW>(config, backend, allocator, units);
}

}  // namespace llmft
