#include "optim/optimizer.h"

#include "core/error.h"
#include "optim/adalomo.h"
#include "optim/adamw.h"
#include "optim/lomo.h"
#include "optim/sgd.h"

namespace llmft {

OptimizerKind parse_optimizer_kind(const std::string& name) {
  if (name == "sgd") return OptimizerKind::sgd;
  if (name == "adamw") return OptimizerKind::adamw;
  if (name == "lomo") return OptimizerKind::lomo;
  if (name == "adalomo") return OptimizerKind::adalomo;
  LLMFT_FAIL("--optimizer " << name << ": unknown optimizer; use sgd, adamw, lomo or adalomo");
}

const char* optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::sgd:
      return "sgd";
    case OptimizerKind::adamw:
      return "adamw";
    case OptimizerKind::lomo:
      return "lomo";
    case OptimizerKind::adalomo:
      return "adalomo";
  }
  return "?";
}

void check_accumulation(OptimizerKind kind, int micro_batches) {
  LLMFT_REQUIRE(micro_batches == 1 || !is_fused(kind),
                "--grad-accum " << micro_batches << " with --optimizer "
                                << optimizer_kind_name(kind)
                                << ": a fused optimizer applies each gradient during backward "
                                   "and frees it, so there is nothing to accumulate into; "
                                   "raise --micro-batch instead, or use adamw or sgd");
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, Backend& backend,
                                          Allocator& allocator,
                                          const std::vector<UnitLayout>& units,
                                          const std::vector<UnitSpan>& spans,
                                          ReduceGroup* tensor_parallel) {
  switch (config.kind) {
    case OptimizerKind::sgd:
      return std::make_unique<Sgd>(config, backend, allocator, spans);
    case OptimizerKind::lomo:
      return std::make_unique<Lomo>(config, backend);
    case OptimizerKind::adalomo:
      return std::make_unique<AdaLomo>(config, backend, allocator, units, spans, tensor_parallel);
    case OptimizerKind::adamw:
      break;
  }
  return std::make_unique<AdamW>(config, backend, allocator, spans);
}

}  // namespace llmft
