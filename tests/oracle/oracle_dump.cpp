// Writes what tests/oracle/hf_oracle.py checks against Hugging Face transformers: a model
// directory (config.json, model.safetensors) with llmft's weights, the logits on batch 0
// (logits.safetensors), the gradient of the mean loss on batch 0 (grads.safetensors),
// the token batches (batch.safetensors; a few targets masked with -1), and the losses of
// AdamW steps (result.json).
//
// usage: oracle_dump OUT_DIR FAMILY VOCAB POSITIONS HIDDEN LAYERS HEADS KV_HEADS INNER TIED
//                    BATCH SEQ STEPS [ROPE]
//   FAMILY gpt2 | llama; TIED 1 | 0 (gpt2 is always tied)
//   ROPE (llama): default | linear:FACTOR | llama3:FACTOR:LOW:HIGH:ORIGINAL_CONTEXT
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/cpu/cpu_backend.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "core/param_init.h"
#include "core/tp_slice.h"
#include "io/atomic_file.h"
#include "io/hf_checkpoint.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "launch/guarded_main.h"
#include "parallel/engine.h"

using namespace llmft;

namespace {

// Weights larger than GPT-2's 0.02 init and non-trivial LayerNorm parameters, so that
// convention errors (GELU variant, transposes, norm placement) show up in the numbers.
io::UnitValues oracle_weights(const std::vector<UnitLayout>& units) {
  io::UnitValues values;
  for (const UnitLayout& u : units) {
    values.emplace_back(u.numel);
    for (const ParamInfo& p : u.params) {
      ParamInfo noisy = p;
      noisy.init_std = p.init_std > 0 ? 0.2f : 0.1f;
      initial_values(noisy, 77, 0, p.numel(), values.back().data() + p.offset);
      if (p.init_value == 1.0f) {
        for (int64_t i = 0; i < p.numel(); ++i) values.back()[p.offset + i] += 1.0f;
      }
    }
  }
  return values;
}

io::SafeTensor int_tensor(const std::string& name, const std::vector<int32_t>& data,
                          std::vector<int64_t> shape) {
  io::SafeTensor t{name, "I32", std::move(shape), {}};
  t.bytes.resize(data.size() * sizeof(int32_t));
  std::memcpy(t.bytes.data(), data.data(), t.bytes.size());
  return t;
}

// ROPE's scaling: the fields after the type, separated by ':'.
RopeScaling parse_rope(const std::string& spec) {
  std::vector<std::string> fields;
  std::stringstream in(spec);
  for (std::string field; std::getline(in, field, ':');) fields.push_back(field);
  RopeScaling s;
  if (fields.size() == 1 && fields[0] == "default") return s;
  if (fields.size() == 2 && fields[0] == "linear") {
    return RopeScaling{RopeType::linear, std::stod(fields[1]), 1.0, 4.0, 0};
  }
  LLMFT_REQUIRE(fields.size() == 5 && fields[0] == "llama3",
                "ROPE " << spec
                        << ": expected default, linear:FACTOR or "
                           "llama3:FACTOR:LOW:HIGH:ORIGINAL_CONTEXT");
  return RopeScaling{RopeType::llama3, std::stod(fields[1]), std::stod(fields[2]),
                     std::stod(fields[3]), std::stoll(fields[4])};
}

int run(int argc, char** argv) {
  LLMFT_REQUIRE(argc == 14 || argc == 15,
                "usage: oracle_dump OUT_DIR FAMILY VOCAB POSITIONS HIDDEN LAYERS "
                "HEADS KV_HEADS INNER TIED BATCH SEQ STEPS [ROPE]");
  const std::string dir = argv[1], family = argv[2];
  LLMFT_REQUIRE(family == "gpt2" || family == "llama", "FAMILY must be gpt2 or llama");
  ModelConfig c;
  c.name = "oracle";
  c.family = family == "gpt2" ? ModelFamily::gpt2 : ModelFamily::llama;
  c.vocab_size = std::stoi(argv[3]);
  c.max_seq_len = std::stoi(argv[4]);
  c.hidden = std::stoi(argv[5]);
  c.n_layer = std::stoi(argv[6]);
  c.n_head = std::stoi(argv[7]);
  c.n_kv_head = std::stoi(argv[8]);
  c.intermediate = std::stoi(argv[9]);
  c.tie_embeddings = std::stoi(argv[10]) != 0;
  if (c.family == ModelFamily::llama) {
    c.norm_eps = 1e-6f;
    c.rope_theta = 500000.0f;
    if (argc == 15) c.rope_scaling = parse_rope(argv[14]);
  }
  validate(c);
  const int B = std::stoi(argv[11]), T = std::stoi(argv[12]), steps = std::stoi(argv[13]);

  EngineOptions o;
  o.optimizer.kind = OptimizerKind::adamw;
  o.optimizer.beta1 = 0.9f;
  o.optimizer.beta2 = 0.95f;
  o.optimizer.eps = 1e-8f;
  o.optimizer.weight_decay = 0.1f;
  // lr 1e-2 makes a wrong weight-decay rule move the losses well past the tolerance.
  o.schedule = LrSchedule{LrShape::constant, 1e-2f, 0.0f, 0, steps};
  CpuBackend be;
  Allocator alloc(be.memory(), 0);
  auto model_ptr = make_model(c, be, alloc);
  Model& model = *model_ptr;
  Engine engine(model, be, alloc, o);
  // The weights in Hugging Face shapes, and in the model's (its vocabulary padded).
  const std::vector<UnitLayout> whole = unit_layouts(c);
  const io::UnitValues weights = oracle_weights(whole);
  for (size_t u = 0; u < weights.size(); ++u) {
    engine.write_params(static_cast<int>(u),
                        slice_unit(whole[u], model.units()[u], TpSlice{}, weights[u]));
  }
  io::write_hf_model_dir(dir, c, whole, weights);

  std::mt19937_64 rng(2024);
  std::vector<int32_t> inputs(static_cast<size_t>(steps) * B * T), targets(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = static_cast<int32_t>(rng() % c.vocab_size);
    targets[i] = static_cast<int32_t>(rng() % c.vocab_size);
    if (i % 7 == 3) targets[i] = -1;  // masked positions, as prompt tokens are
  }
  io::write_safetensors(
      dir + "/batch.safetensors",
      {int_tensor("inputs", inputs, {steps, B, T}), int_tensor("targets", targets, {steps, B, T})});

  const std::vector<float> logits = engine.logits(MicroBatch{B, T, inputs.data(), nullptr});
  io::SafeTensor logits_tensor{"logits", "F32", {B, T, c.vocab_size}, {}};
  logits_tensor.bytes.resize(logits.size() * sizeof(float));
  std::memcpy(logits_tensor.bytes.data(), logits.data(), logits_tensor.bytes.size());
  io::write_safetensors(dir + "/logits.safetensors", {logits_tensor});

  io::Json losses = io::Json::array({});
  double first_loss = 0;
  for (int step = 1; step <= steps; ++step) {
    const size_t offset = static_cast<size_t>(step - 1) * B * T;
    StepStats s = engine.train_step(
        {MicroBatch{B, T, inputs.data() + offset, targets.data() + offset}}, step);
    losses.push_back(io::Json::number(s.loss));
    if (step == 1) {
      first_loss = s.loss;
      io::UnitValues grads;
      for (size_t u = 0; u < model.units().size(); ++u) {
        grads.push_back(
            whole_from_slice(whole[u], model.units()[u], engine.read_grads(static_cast<int>(u))));
      }
      io::write_hf_safetensors(dir + "/grads.safetensors", whole, grads);
    }
  }
  io::Json adamw = io::Json::object({});
  adamw.set("lr", io::Json::number(o.schedule.peak_lr));
  adamw.set("beta1", io::Json::number(o.optimizer.beta1));
  adamw.set("beta2", io::Json::number(o.optimizer.beta2));
  adamw.set("eps", io::Json::number(o.optimizer.eps));
  adamw.set("weight_decay", io::Json::number(o.optimizer.weight_decay));
  adamw.set("losses", losses);
  io::Json result = io::Json::object({});
  result.set("loss", io::Json::number(first_loss));
  result.set("adamw", adamw);
  io::write_file_atomically(dir + "/result.json", result.dump() + "\n");
  std::printf("wrote %s: loss %.6f, %d AdamW steps\n", dir.c_str(), first_loss, steps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return llmft::guarded_main("oracle_dump", run, argc, argv);
}
