// MicroBatch: a non-owning view of one micro-batch of tokens in host memory.
#pragma once

#include <cstdint>

namespace llmft {

struct MicroBatch {
  int batch = 0;
  int seq_len = 0;
  const int32_t* inputs = nullptr;   // (batch, seq_len)
  const int32_t* targets = nullptr;  // (batch, seq_len); negative = not in the loss
  int position = 0;                  // position of the first token (non-zero only when decoding)
  // (batch, seq_len): each token's position within its sample, for samples packed into a
  // window (attention never crosses a sample's start); null for a continuous stream, whose
  // positions are position, position + 1, ...
  const int32_t* positions = nullptr;
};

}  // namespace llmft
