#include "core/unit_layout.h"

namespace llmft {

int UnitLayout::add(ParamInfo p) {
  if (p.full_shape.empty()) p.full_shape = p.shape;
  p.offset = numel;
  numel += p.numel();
  params.push_back(std::move(p));
  return static_cast<int>(params.size()) - 1;
}

Tensor UnitLayout::slice(const Tensor& flat, int index) const {
  const ParamInfo& p = params[index];
  return flat.view(p.offset, p.shape);
}

int64_t total_numel(const std::vector<UnitLayout>& units) {
  int64_t total = 0;
  for (const UnitLayout& unit : units) total += unit.numel;
  return total;
}

}  // namespace llmft
