// Loads a Hugging Face model directory as `llmft --init-from` does (config.json, and one
// model.safetensors or shards through model.safetensors.index.json, F32/BF16/F16) and
// writes its logits and mean loss on a token batch, for tests/oracle/hf_weights_oracle.py
// to compare with transformers.
//
// usage: hf_logits MODEL_DIR BATCH.safetensors OUT.safetensors
//   BATCH holds I32 "inputs" and "targets" of shape (B, T) (targets -1: not counted);
//   OUT gets F32 "logits" (B, T, vocab) and "loss" (a scalar).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "io/hf_weight_loader.h"
#include "io/safetensors.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"

using namespace llmft;

namespace {

std::vector<int32_t> int_values(const io::SafeTensor& t) {
  LLMFT_REQUIRE(t.dtype == "I32" && t.shape.size() == 2,
                "batch tensor " << t.name << " must be I32 (B, T)");
  std::vector<int32_t> values(t.bytes.size() / sizeof(int32_t));
  std::memcpy(values.data(), t.bytes.data(), t.bytes.size());
  return values;
}

io::SafeTensor float_tensor(const std::string& name, const std::vector<float>& values,
                            std::vector<int64_t> shape) {
  io::SafeTensor t{name, "F32", std::move(shape), {}};
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

int run(int argc, char** argv) {
  LLMFT_REQUIRE(argc == 4, "usage: hf_logits MODEL_DIR BATCH.safetensors OUT.safetensors");
  const std::string dir = argv[1];
  const ModelConfig config = io::resolve_model(dir);
  const io::SafetensorsFile batch(argv[2]);
  const std::vector<int32_t> inputs = int_values(batch.at("inputs"));
  std::vector<int32_t> targets = int_values(batch.at("targets"));
  const int B = static_cast<int>(batch.at("inputs").shape[0]);
  const int T = static_cast<int>(batch.at("inputs").shape[1]);

  CpuBackend backend;
  Allocator allocator(backend.memory(), 0);
  std::unique_ptr<Model> model = make_model(config, backend, allocator);
  EngineOptions options;
  options.trainable = false;
  Engine engine(*model, backend, allocator, options);
  io::HfWeightLoader loader(dir);
  const std::vector<UnitLayout> whole = unit_layouts(config);
  for (size_t u = 0; u < model->units().size(); ++u) {
    engine.write_params(static_cast<int>(u),
                        loader.read_unit(whole[u], model->units()[u], TpSlice{}));
  }
  const std::vector<float> logits = engine.logits(MicroBatch{B, T, inputs.data(), nullptr});
  const double loss = engine.evaluate({MicroBatch{B, T, inputs.data(), targets.data()}});
  io::write_safetensors(argv[3], {float_tensor("logits", logits, {B, T, config.vocab_size}),
                                  float_tensor("loss", {static_cast<float>(loss)}, {})});
  std::printf("%s: loss %.7f from %d weight file(s)\n", dir.c_str(), loss,
              loader.files().shard_count());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("hf_logits", run, argc, argv);
}
