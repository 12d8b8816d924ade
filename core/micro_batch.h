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
};

}  // namespace llmft
