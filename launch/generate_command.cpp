// `llmft generate`: sample text from a saved model (config.json + model.safetensors),
// with a KV cache: the prompt runs once, then one position per new token.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "core/backend_registry.h"
#include "core/error.h"
#include "core/model_factory.h"
#include "io/hf_config.h"
#include "io/hf_weight_loader.h"
#include "io/streaming_decoder.h"
#include "io/tokenizer.h"
#include "launch/command_line.h"
#include "launch/commands.h"
#include "launch/cpu_share.h"
#include "launch/option_checks.h"
#include "launch/sampling.h"
#include "parallel/engine.h"

namespace llmft {

int run_generate(const Args& args, MpiRuntime& mpi) {
  std::string checkpoint, prompt, tokenizer_spec, device;
  int max_new_tokens = 0, top_k = 0, threads = 0;
  float temperature = 0.0f;
  uint64_t seed = 0;
  po::options_description options("Generate");
  // clang-format off
  options.add_options()
      ("checkpoint", po::value(&checkpoint)->default_value(""),
       "model directory (config.json + model.safetensors), e.g. a --save-dir")
      ("prompt", po::value(&prompt)->default_value(""), "text to continue")
      ("max-new-tokens", po::value(&max_new_tokens)->default_value(200), "tokens to sample")
      ("temperature", po::value(&temperature)->default_value(0.8f), "0 = greedy")
      ("top-k", po::value(&top_k)->default_value(40), "sample among the k likeliest (0 = all)")
      ("seed", po::value<std::string>()->default_value("1")->notifier(
           [&seed](const std::string& text) { seed = parse_seed(text, "--seed"); }),
       "sampling seed (0 to 2^64 - 1)")
      ("tokenizer", po::value(&tokenizer_spec)->default_value("byte"),
       "byte, or bpe:PATH / a path to the model's tokenizer.json (GPT-2, Llama 2/3, Mistral) "
       "or vocab.json")
      ("device", po::value(&device)->default_value("cpu"), "cpu")
      ("threads", po::value(&threads)->default_value(0),
       "CPU threads (0 = OMP_NUM_THREADS if set, else this rank's share of the CPUs it "
       "may run on, divided with the node's other ranks)");
  // clang-format on
  po::variables_map values;
  const std::string usage = "usage: llmft generate --checkpoint DIR --prompt TEXT [options]";
  if (!parse_options(args, options, values, usage, mpi.rank() == 0)) return 0;
  LLMFT_REQUIRE(!checkpoint.empty(), "--checkpoint is required: a directory written by --save-dir");
  LLMFT_REQUIRE(max_new_tokens >= 0, "--max-new-tokens must not be negative");
  LLMFT_REQUIRE(
      std::isfinite(temperature) && temperature >= 0,
      "--temperature must be a finite number >= 0, 0 for greedy (got " << temperature << ")");
  LLMFT_REQUIRE(top_k >= 0, "--top-k must not be negative");
  require_thread_count(threads, "--threads");
  if (threads == 0) threads = default_threads(mpi);
  LLMFT_REQUIRE(std::filesystem::is_directory(checkpoint),
                "--checkpoint " << checkpoint << ": not a directory");
  if (mpi.rank() != 0) return 0;

  const ModelConfig config = io::resolve_model(checkpoint);
  auto tokenizer = io::make_tokenizer(tokenizer_spec);
  LLMFT_REQUIRE(tokenizer->vocab_size() == config.vocab_size,
                "--tokenizer " << tokenizer_spec << " has a vocabulary of "
                               << tokenizer->vocab_size() << " but the checkpoint's model has "
                               << config.vocab_size);
  std::unique_ptr<Backend> backend = make_backend(device);
  if (threads > 0) backend->set_threads(threads);
  Allocator allocator(backend->memory(), 0);
  std::unique_ptr<Model> model = make_model(config, *backend, allocator);
  EngineOptions engine_options;
  engine_options.trainable = false;
  Engine engine(*model, *backend, allocator, engine_options);
  io::HfWeightLoader weights(checkpoint);
  for (size_t u = 0; u < model->units().size(); ++u) {
    engine.write_params(static_cast<int>(u),
                        weights.read_unit(model->units()[u], model->units()[u], TpSlice{}));
  }

  std::vector<int32_t> tokens = tokenizer->encode_with_special_tokens(prompt);
  if (tokens.empty()) tokens.push_back(tokenizer->eot_token());
  io::StreamingDecoder decoder(*tokenizer, tokens);
  const int prompt_tokens = static_cast<int>(tokens.size());
  LLMFT_REQUIRE(prompt_tokens < config.max_seq_len,
                "--prompt is " << prompt_tokens << " tokens but the model's context is "
                               << config.max_seq_len << "; shorten it");
  const int max_len = static_cast<int>(
      std::min<int64_t>(config.max_seq_len, static_cast<int64_t>(prompt_tokens) + max_new_tokens));
  std::printf("%s", prompt.c_str());
  std::mt19937_64 rng(seed);
  // The prompt runs once; then each new token is one position against the KV cache.
  model->begin_decoding(1, max_len);
  std::vector<float> logits =
      engine.logits(MicroBatch{1, prompt_tokens, tokens.data(), nullptr, 0});
  while (static_cast<int>(tokens.size()) < max_len) {
    const std::vector<float> last(logits.end() - config.vocab_size, logits.end());
    tokens.push_back(sample_token(last, temperature, top_k, rng));
    std::printf("%s", decoder.push(tokens.back()).c_str());
    std::fflush(stdout);
    if (static_cast<int>(tokens.size()) == max_len) break;
    const int position = static_cast<int>(tokens.size()) - 1;
    logits = engine.logits(MicroBatch{1, 1, &tokens.back(), nullptr, position});
  }
  model->end_decoding();
  std::printf("%s\n", decoder.finish().c_str());
  if (max_len < static_cast<int64_t>(prompt_tokens) + max_new_tokens) {
    std::fprintf(stderr, "generate: stopped at the model's context of %d tokens\n", max_len);
  }
  return 0;
}

}  // namespace llmft
