// `llmft prepare`: text or JSONL -> token file.
#include <cstdio>

#include "core/error.h"
#include "io/prepare.h"
#include "io/token_file.h"
#include "io/tokenizer.h"
#include "io/window_layout.h"
#include "launch/command_line.h"
#include "launch/commands.h"
#include "launch/output_checks.h"

namespace llmft {

int run_prepare(const Args& args, MpiRuntime& mpi) {
  std::string input, output, tokenizer, chat_template;
  int seq_len = 0;
  po::options_description options("Prepare");
  // clang-format off
  options.add_options()
      ("input", po::value(&input)->default_value(""),
       "a text file (one document, one continuous stream) or .jsonl: one sample per line, "
       "{\"text\": ...}, {\"prompt\": ..., \"response\": ...} (prompt tokens are left out of "
       "the loss) or a conversation {\"messages\": [{\"role\": ..., \"content\": ...}, ...]} "
       "(rendered with the chat template; only assistant turns are trained on)")
      ("output", po::value(&output)->default_value(""), "token file to write")
      ("tokenizer", po::value(&tokenizer)->default_value("byte"),
       "byte, or the model's BPE (GPT-2, Llama 2/3, Mistral): bpe:PATH or a path to a "
       "tokenizer.json (tokenizer_config.json beside it is read too), a vocab.json (with "
       "merges.txt beside it) or a directory of either")
      ("chat-template", po::value(&chat_template)->default_value(""),
       "a Jinja2 chat template file for conversations; default: chat_template.jinja beside "
       "the tokenizer, else \"chat_template\" in its tokenizer_config.json")
      ("seq-len", po::value(&seq_len)->default_value(0),
       "also say how training at this --seq-len will cut the file into windows: how many "
       "samples fit, are cut to it or dropped (0: do not)");
  // clang-format on
  po::variables_map values;
  const std::string usage =
      "usage: llmft prepare --input FILE --output FILE.tok [--tokenizer byte|PATH] "
      "[--chat-template FILE] [--seq-len N]";
  if (!parse_options(args, options, values, usage, mpi.rank() == 0)) return 0;
  LLMFT_REQUIRE(!input.empty(), "--input is required: the text or .jsonl file to tokenize");
  LLMFT_REQUIRE(!output.empty(), "--output is required: where to write the token file");
  LLMFT_REQUIRE(seq_len >= 0,
                "--seq-len must be positive (or 0: no window report), got " << seq_len);
  std::vector<io::NamedInput> inputs = tokenizer_inputs(tokenizer, "--tokenizer");
  inputs.push_back({"--input", input});
  if (!chat_template.empty()) inputs.push_back({"--chat-template", chat_template});
  check_replaced_output(output, "--output", inputs);
  if (mpi.rank() != 0) return 0;
  auto tok = io::make_tokenizer(tokenizer);
  const io::PrepareStats stats = io::prepare_token_file(
      input, output, *tok, {io::tokenizer_directory(tokenizer), chat_template});
  std::printf(
      "prepare: %zu documents, %zu bytes -> %zu tokens, %zu of them loss targets (%s tokenizer, "
      "vocab %d) in %s\n",
      stats.documents, stats.bytes, stats.tokens, stats.target_tokens, tok->name().c_str(),
      tok->vocab_size(), output.c_str());
  if (stats.samples > 0) {
    std::printf("prepare: %zu samples (one per line), the longest %zu tokens\n", stats.samples,
                stats.longest_sample);
  } else {
    std::printf("prepare: plain text: one continuous stream, no sample boundaries\n");
  }
  if (stats.conversations > 0) {
    std::printf("prepare: %zu conversations rendered with chat template %s\n", stats.conversations,
                stats.chat_template.c_str());
  }
  if (stats.turns_without_end > 0) {
    std::printf(
        "prepare: note: %zu assistant turns have no end-of-turn token after them (the "
        "template writes none), so the model is not taught to stop there\n",
        stats.turns_without_end);
  }
  if (seq_len > 0) {
    // The file as training will read it: the same windows, cut and dropped the same way.
    const io::TokenFile file(output);
    try {
      const io::WindowLayout windows(file, seq_len);
      std::printf("prepare: at --seq-len %d: %zu windows%s\n", seq_len, windows.num_windows(),
                  windows.describe_packing().c_str());
    } catch (const Error& e) {
      std::printf("prepare: warning: training at --seq-len %d will refuse the file: %s\n", seq_len,
                  e.what());
    }
  }
  return 0;
}

}  // namespace llmft
