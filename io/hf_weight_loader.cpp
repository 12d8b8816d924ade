#include "io/hf_weight_loader.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/host_convert.h"
#include "io/json.h"

namespace llmft::io {
namespace {

// A rectangle of a parameter in llmft's (rows, cols) layout — vectors are one column — and
// where its rows go in the rank's slice.
struct Block {
  int64_t row0, rows, col0, cols;
  int64_t local_offset, local_stride;
};

// The slice's tensor-parallel runs (core/tp_slice.h) as rectangles: a run of whole rows is
// one; the runs of a column split, one per row, merge into one.
std::vector<Block> blocks_of(const ParamInfo& local, int64_t cols, TpSlice slice) {
  std::vector<Block> blocks;
  for (const TpRun& run : tp_runs(local, slice)) {
    if (run.full % cols == 0 && run.count % cols == 0) {
      blocks.push_back({run.full / cols, run.count / cols, 0, cols, run.local, cols});
      continue;
    }
    const Block piece{run.full / cols, 1, run.full % cols, run.count, run.local, run.count};
    LLMFT_REQUIRE(piece.col0 + piece.cols <= cols,
                  "internal: a slice run of " << local.name << " crosses a row");
    Block* last = blocks.empty() ? nullptr : &blocks.back();
    if (last != nullptr && last->col0 == piece.col0 && last->cols == piece.cols &&
        last->row0 + last->rows == piece.row0 &&
        last->local_offset + last->rows * last->local_stride == piece.local_offset) {
      ++last->rows;
    } else {
      blocks.push_back(piece);
    }
  }
  return blocks;
}

DType stored_dtype(const SafetensorsEntry& entry, const std::string& path) {
  if (entry.dtype == "F32") return DType::f32;
  if (entry.dtype == "BF16") return DType::bf16;
  if (entry.dtype == "F16") return DType::f16;
  LLMFT_FAIL(path << ": tensor " << entry.name << " is " << entry.dtype
                  << "; llmft reads F32, BF16 and F16 weights (convert the checkpoint, e.g. "
                     "with transformers' save_pretrained after .to(torch.bfloat16))");
}

// Reads the elements [first, first + count) of one tensor (row-major, as stored) as f32.
class TensorReader {
 public:
  TensorReader(HfWeightFiles::Tensor tensor, DType dtype) : tensor_(tensor), dtype_(dtype) {}

  std::vector<float> read(int64_t first, int64_t count) {
    const uint64_t element = dtype_size(dtype_);
    bytes_.resize(count * element);
    tensor_.file->read_at(tensor_.entry->file_offset + first * element, bytes_.size(),
                          bytes_.data());
    return from_dtype_bytes(bytes_, dtype_);
  }

 private:
  HfWeightFiles::Tensor tensor_;
  DType dtype_;
  std::vector<uint8_t> bytes_;
};

// Copies a block from the stored tensor into the slice. Stored as llmft lays it out, a row
// of the block is contiguous; stored transposed (cols, rows), a column is.
void read_block(TensorReader& reader, const Block& b, int64_t rows, int64_t cols, bool transposed,
                float* local) {
  if (!transposed) {
    if (b.cols == cols) {
      const std::vector<float> values = reader.read(b.row0 * cols, b.rows * cols);
      std::copy(values.begin(), values.end(), local + b.local_offset);
      return;
    }
    for (int64_t r = 0; r < b.rows; ++r) {
      const std::vector<float> values = reader.read((b.row0 + r) * cols + b.col0, b.cols);
      std::copy(values.begin(), values.end(), local + b.local_offset + r * b.local_stride);
    }
    return;
  }
  // Stored (cols, rows): stored row c holds the block's column c.
  std::vector<float> columns;  // (b.cols, b.rows)
  if (b.rows == rows) {
    columns = reader.read(b.col0 * rows, b.cols * rows);
  } else {
    for (int64_t c = 0; c < b.cols; ++c) {
      const std::vector<float> values = reader.read((b.col0 + c) * rows + b.row0, b.rows);
      columns.insert(columns.end(), values.begin(), values.end());
    }
  }
  for (int64_t r = 0; r < b.rows; ++r) {
    for (int64_t c = 0; c < b.cols; ++c) {
      local[b.local_offset + r * b.local_stride + c] = columns[c * b.rows + r];
    }
  }
}

}  // namespace

std::vector<float> HfWeightLoader::read_unit(const UnitLayout& whole, const UnitLayout& local,
                                             TpSlice slice) {
  LLMFT_REQUIRE(whole.params.size() == local.params.size(),
                "internal: unit " << local.name << " does not match its whole layout");
  std::vector<float> values(static_cast<size_t>(local.numel), 0.0f);
  for (size_t i = 0; i < local.params.size(); ++i) {
    const ParamInfo& full = whole.params[i];
    const HfWeightFiles::Tensor tensor = files_.locate(full.name);
    const std::string& path = tensor.file->path();
    const Shape expected = full.hf_transposed ? Shape{full.shape[1], full.shape[0]} : full.shape;
    const Shape stored(tensor.entry->shape.begin(), tensor.entry->shape.end());
    LLMFT_REQUIRE(stored == expected, path << ": tensor " << full.name << " has shape "
                                           << shape_string(stored) << " but the model needs "
                                           << shape_string(expected)
                                           << "; check that --model matches the checkpoint");
    TensorReader reader(tensor, stored_dtype(*tensor.entry, path));
    const int64_t rows = full.shape[0], cols = full.shape.size() == 2 ? full.shape[1] : 1;
    float* param = values.data() + local.params[i].offset;
    for (const Block& block : blocks_of(local.params[i], cols, slice)) {
      read_block(reader, block, rows, cols, full.hf_transposed, param);
    }
    const float* bad = std::find_if(param, param + local.params[i].numel(),
                                    [](float v) { return !std::isfinite(v); });
    LLMFT_REQUIRE(bad == param + local.params[i].numel(),
                  path << ": tensor " << full.name << " holds " << *bad
                       << "; the weights are corrupt or come from a diverged run");
  }
  return values;
}

}  // namespace llmft::io
