#include "core/decoder/family.h"

namespace llmft {

std::vector<UnitLayout> unit_layouts(const Family& family, const ModelConfig& config, TpSlice tp,
                                     int64_t vocab_row_multiple) {
  std::vector<UnitLayout> units = {family.embedding_layout(config, tp, vocab_row_multiple)};
  for (int l = 0; l < config.n_layer; ++l) units.push_back(family.block_layout(config, l, tp));
  units.push_back(family.head_layout(config, tp, vocab_row_multiple));
  return units;
}

}  // namespace llmft
