#include "io/hf_checkpoint.h"

#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/hf_config.h"
#include "io/safetensors.h"

namespace llmft::io {

namespace {

Shape hf_shape(const ParamInfo& p) {
  return p.hf_transposed ? Shape{p.shape[1], p.shape[0]} : p.shape;
}

// Copies (rows, cols) row-major `src` into (cols, rows) `dst`.
void transpose(const float* src, float* dst, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  }
}

}  // namespace

void write_hf_safetensors(const std::string& path, const std::vector<UnitLayout>& units,
                          const UnitValues& values) {
  std::vector<SafeTensor> tensors;
  for (size_t u = 0; u < units.size(); ++u) {
    for (const ParamInfo& p : units[u].params) {
      SafeTensor t;
      t.name = p.name;
      t.dtype = "F32";
      const Shape shape = hf_shape(p);
      t.shape.assign(shape.begin(), shape.end());
      t.bytes.resize(static_cast<size_t>(p.numel()) * sizeof(float));
      const float* src = values[u].data() + p.offset;
      if (p.hf_transposed) {
        transpose(src, reinterpret_cast<float*>(t.bytes.data()), p.shape[0], p.shape[1]);
      } else {
        std::memcpy(t.bytes.data(), src, t.bytes.size());
      }
      tensors.push_back(std::move(t));
    }
  }
  write_safetensors(path, tensors, {{"format", "pt"}});
}

void ensure_directory(const std::string& dir, const std::string& option) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  LLMFT_REQUIRE(!ec && std::filesystem::is_directory(dir),
                option << " " << dir << ": cannot create the directory ("
                       << (ec ? ec.message() : "a file is in the way")
                       << "); choose a writable path");
}

void write_hf_model_dir(const std::string& dir, const ModelConfig& config,
                        const std::vector<UnitLayout>& units, const UnitValues& values) {
  namespace fs = std::filesystem;
  ensure_directory(dir, "model directory");
  // Weights first: a failure never leaves a new config beside old or missing weights.
  write_hf_safetensors((fs::path(dir) / "model.safetensors").string(), units, values);
  write_file_atomically((fs::path(dir) / "config.json").string(),
                        hf_config_json(config).dump() + "\n");
}

UnitValues read_hf_safetensors(const std::string& path, const std::vector<UnitLayout>& units) {
  SafetensorsFile file(path);
  UnitValues values(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    values[u].resize(static_cast<size_t>(units[u].numel));
    for (const ParamInfo& p : units[u].params) {
      const SafeTensor& t = file.at(p.name);
      const Shape expected = hf_shape(p);
      LLMFT_REQUIRE(t.dtype == "F32", path << ": tensor " << p.name << " is " << t.dtype
                                           << "; this build reads F32 weights");
      LLMFT_REQUIRE(Shape(t.shape.begin(), t.shape.end()) == expected,
                    path << ": tensor " << p.name << " has shape "
                         << shape_string(Shape(t.shape.begin(), t.shape.end()))
                         << " but the model needs " << shape_string(expected)
                         << "; check that --model matches the checkpoint");
      const float* src = reinterpret_cast<const float*>(t.bytes.data());
      float* dst = values[u].data() + p.offset;
      if (p.hf_transposed) {
        transpose(src, dst, p.shape[1], p.shape[0]);
      } else {
        std::memcpy(dst, src, t.bytes.size());
      }
    }
  }
  return values;
}

}  // namespace llmft::io
