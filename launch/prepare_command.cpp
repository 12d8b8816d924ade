// `llmft prepare`: text or JSONL -> token file.
#include <unistd.h>

#include <cstdio>

#include "core/error.h"
#include "io/prepare.h"
#include "io/tokenizer.h"
#include "launch/command_line.h"
#include "launch/commands.h"
#include "launch/output_checks.h"

namespace llmft {

int run_prepare(const Args& args, MpiRuntime& mpi) {
  std::string input, output, tokenizer;
  po::options_description options("Prepare");
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->default_value(""),
       "a text file (one document) or .jsonl: one {\"text\": ...} or {\"prompt\": ..., "
       "\"response\": ...} document per line (prompt tokens are left out of the loss)")
      ("output", po::value(&output)->default_value(""), "token file to write")
      ("tokenizer", po::value(&tokenizer)->default_value("byte"),
       "byte, or the model's BPE (GPT-2, Llama 2/3, Mistral): bpe:PATH or a path to a "
       "tokenizer.json (tokenizer_config.json beside it is read too), a vocab.json (with "
       "merges.txt beside it) or a directory of either");
  // clang-format on
  po::variables_map values;
  const std::string usage =
      "usage: llmft prepare --input FILE --output FILE.tok [--tokenizer byte|PATH]";
  if (!parse_options(args, options, values, usage, mpi.rank() == 0)) return 0;
  LLMFT_REQUIRE(!input.empty(), "--input is required: the text or .jsonl file to tokenize");
  LLMFT_REQUIRE(!output.empty(), "--output is required: where to write the token file");
  std::vector<io::NamedInput> inputs = tokenizer_inputs(tokenizer, "--tokenizer");
  inputs.push_back({"--input", input});
  check_replaced_output(output, "--output", inputs);
  if (mpi.rank() != 0) return 0;
  auto tok = io::make_tokenizer(tokenizer);
  io::PrepareStats stats = io::prepare_token_file(input, output, *tok, isatty(fileno(stderr)));
  std::printf(
      "prepare: %zu documents, %zu bytes -> %zu tokens, %zu of them loss targets (%s tokenizer, "
      "vocab %d) in %s\n",
      stats.documents, stats.bytes, stats.tokens, stats.target_tokens, tok->name().c_str(),
      tok->vocab_size(), output.c_str());
  return 0;
}

}  // namespace llmft
