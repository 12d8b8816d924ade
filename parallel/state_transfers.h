// State transfers: the parts of a checkpoint's datasets that this rank writes or reads,
// and where they sit in the tensors the Engine holds. A checkpoint stores every tensor of
// the training state whole (docs/ARCHITECTURE.md, "Checkpoints"): weights in their stored
// dtype, f32 master weights, element-wise optimizer state (AdamW's moments, SGD's
// momentum) under "<kind>/<parameter name>" with the parameter's whole shape in llmft's
// layout (linear weights (out, in)), and AdaLomo's statistics as the vectors
// "adalomo_row/<name>" and "adalomo_col/<name>". Each rank moves only its own elements:
// its ZeRO shard of its tensor-parallel slice. Writing, each element has one writer
// (replicated values come from data-parallel rank 0 and tensor-parallel rank 0);
// reading, each rank reads everything it holds, whatever layout wrote the file.
// Pure bookkeeping: no file access and no device copies.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/tp_slice.h"
#include "core/unit_pieces.h"
#include "parallel/engine.h"

namespace llmft {

// One dataset's part: `pieces` (sorted by `full`, disjoint) are `count` elements at
// `full` in the whole tensor and at `local` in `source`.
struct StateTransfer {
  std::string dataset;  // e.g. "master/transformer.h.0.mlp.c_fc.weight"
  Shape shape;          // the whole tensor's
  DType dtype = DType::f32;
  Tensor source;  // the Engine's tensor the pieces sit in
  std::vector<TensorPiece> pieces;

  int64_t elements() const;
};

enum class TransferDirection { write, read };

// The transfers of unit `unit` of `engine` (whose model holds tensor-parallel slice
// `slice`), in an order that is the same on every rank: one per dataset of the unit. With
// `state_kinds` false, only the weights and their masters (the optimizer state is left out).
// `dp_rank`: this rank in the data-parallel group (writing: only rank 0 writes shared values).
std::vector<StateTransfer> state_transfers(const Engine& engine, int unit, TpSlice slice,
                                           int dp_rank, TransferDirection direction,
                                           bool state_kinds = true);

// The largest host buffer a checkpoint write or read of `engine`'s state stages at once
// (its largest transfer, read side, which covers at least what it writes).
size_t checkpoint_staging_bytes(const Engine& engine, TpSlice slice);

}  // namespace llmft
