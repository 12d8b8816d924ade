// `llmft generate`: text from a saved model directory (config.json + safetensors) with the
// tokenizer beside it: a continuation of --prompt, or with --chat the assistant's reply to
// a message rendered with the model's chat template (an interactive conversation when no
// message is given on a terminal). Generation stops at the model's end-of-text and
// end-of-turn tokens (launch/text_generator.h).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>

#include "core/error.h"
#include "io/bpe_files.h"
#include "io/chat_template.h"
#include "io/end_of_turn.h"
#include "io/hf_config.h"
#include "io/model_directory_files.h"
#include "io/streaming_decoder.h"
#include "io/tokenizer.h"
#include "launch/command_line.h"
#include "launch/commands.h"
#include "launch/cpu_share.h"
#include "launch/option_checks.h"
#include "launch/sampling.h"
#include "launch/text_generator.h"

namespace llmft {

namespace {

namespace fs = std::filesystem;

constexpr int kByteVocabulary = 257;  // llmft's byte tokenizer: bytes and end-of-text

// "--chat" with no message after it (last, or before another option) gets an empty one,
// so that Boost does not take the next option for the message.
Args with_empty_chat_message(const Args& args) {
  Args out;
  for (size_t i = 0; i < args.size(); ++i) {
    out.push_back(args[i]);
    if (args[i] == "--chat" && (i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0)) {
      out.emplace_back();
    }
  }
  return out;
}

// Refuses a training checkpoint (step_N.h5 or a --checkpoint-dir): generate reads the
// model directory `llmft export` makes of it, with the tokenizer the checkpoint does not
// record.
void require_model_directory(const std::string& path) {
  const bool checkpoint_file = fs::path(path).extension() == ".h5";
  bool checkpoint_dir = false;
  if (fs::is_directory(path) && !fs::exists(fs::path(path) / "config.json")) {
    for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
      checkpoint_dir = checkpoint_dir || entry.path().extension() == ".h5";
    }
  }
  LLMFT_REQUIRE(!checkpoint_file && !checkpoint_dir,
                "--checkpoint " << path << " is a training checkpoint, which records no "
                                << "tokenizer; make a model directory of it with `llmft export "
                                << "--checkpoint " << path << " --save-dir DIR --tokenizer "
                                << "TOKENIZER` and generate from DIR");
  LLMFT_REQUIRE(fs::is_directory(path), "--checkpoint " << path << ": not a directory");
}

struct ChosenTokenizer {
  std::unique_ptr<io::Tokenizer> tokenizer;
  std::string dir;  // where its files are (its chat template, its generation_config.json)
  std::string spec;
};

// --tokenizer when given, else the tokenizer files in the model directory, else the byte
// tokenizer for a model of its vocabulary.
ChosenTokenizer choose_tokenizer(const std::string& spec, const std::string& model_dir,
                                 const ModelConfig& config) {
  ChosenTokenizer chosen;
  if (!spec.empty()) {
    chosen.spec = spec;
    chosen.dir = io::tokenizer_directory(spec);
  } else if (const std::string beside = io::tokenizer_beside(model_dir); !beside.empty()) {
    chosen.spec = "bpe:" + beside;
    chosen.dir = beside;
  } else {
    LLMFT_REQUIRE(config.vocab_size == kByteVocabulary,
                  "--checkpoint " << model_dir << " holds no tokenizer (tokenizer.json or "
                                  << "vocab.json); pass the model's tokenizer with --tokenizer");
    chosen.spec = "byte";
  }
  chosen.tokenizer = io::make_tokenizer(chosen.spec);
  LLMFT_REQUIRE(chosen.tokenizer->vocab_size() == config.vocab_size,
                "the tokenizer " << chosen.spec << " has a vocabulary of "
                                 << chosen.tokenizer->vocab_size()
                                 << " but the checkpoint's model has " << config.vocab_size
                                 << "; pass the model's tokenizer with --tokenizer");
  return chosen;
}

// The message piped to `--chat`, without the line end that closes it.
std::string read_message(std::istream& in) {
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  LLMFT_REQUIRE(!text.empty(),
                "--chat without a message read an empty stdin; pass the message "
                "as --chat \"MESSAGE\" or pipe it in");
  return text;
}

}  // namespace

int run_generate(const Args& args, MpiRuntime& mpi) {
  std::string checkpoint, prompt, tokenizer_spec, device, chat, system, chat_template_file;
  int max_new_tokens = 0, threads = 0;
  SamplingOptions sampling;
  uint64_t seed = 0;
  po::options_description options("Generate");
  // clang-format off
  options.add_options()
      ("checkpoint", po::value(&checkpoint)->default_value(""),
       "model directory (config.json + model.safetensors), e.g. a --save-dir or an export")
      ("prompt", po::value(&prompt)->default_value(""), "text to continue")
      ("chat", po::value(&chat),
       "a user message: print the assistant's reply, rendered with the model's chat "
       "template; without a message, a conversation on the terminal (or the message read "
       "from stdin)")
      ("system", po::value(&system)->default_value(""), "--chat: a system message first")
      ("chat-template", po::value(&chat_template_file)->default_value(""),
       "--chat: a Jinja chat template file (default: the tokenizer's chat_template.jinja, "
       "else its tokenizer_config.json's)")
      ("max-new-tokens", po::value(&max_new_tokens)->default_value(200),
       "most tokens to sample (generation also ends at the model's end-of-text and "
       "end-of-turn tokens)")
      ("temperature", po::value(&sampling.temperature)->default_value(0.8f, "0.8"), "0 = greedy")
      ("top-k", po::value(&sampling.top_k)->default_value(40),
       "sample among the k likeliest (0 = all)")
      ("top-p", po::value(&sampling.top_p)->default_value(1.0f, "1.0"),
       "then among the fewest likeliest whose probability reaches p (1 = all)")
      ("seed", po::value<std::string>()->default_value("1")->notifier(
           [&seed](const std::string& text) { seed = parse_seed(text, "--seed"); }),
       "sampling seed (0 to 2^64 - 1)")
      ("tokenizer", po::value(&tokenizer_spec)->default_value(""),
       "byte, or the model's tokenizer.json, vocab.json or directory (default: the files in "
       "--checkpoint, else byte for a model of 257 tokens)")
      ("device", po::value(&device)->default_value("cpu"), "cpu")
      ("threads", po::value(&threads)->default_value(0),
       "CPU threads (0 = OMP_NUM_THREADS if set, else this rank's share of the CPUs it "
       "may run on, divided with the node's other ranks)");
  // clang-format on
  po::variables_map values;
  const std::string usage =
      "usage: llmft generate --checkpoint DIR (--prompt TEXT | --chat [MESSAGE]) [options]";
  if (!parse_options(with_empty_chat_message(args), options, values, usage, mpi.rank() == 0)) {
    return 0;
  }
  const bool chat_mode = values.count("chat") > 0;
  LLMFT_REQUIRE(!checkpoint.empty(), "--checkpoint is required: a directory written by --save-dir");
  LLMFT_REQUIRE(max_new_tokens >= 0, "--max-new-tokens must not be negative");
  LLMFT_REQUIRE(std::isfinite(sampling.temperature) && sampling.temperature >= 0,
                "--temperature must be a finite number >= 0, 0 for greedy (got "
                    << sampling.temperature << ")");
  LLMFT_REQUIRE(sampling.top_k >= 0, "--top-k must not be negative");
  LLMFT_REQUIRE(sampling.top_p > 0 && sampling.top_p <= 1,
                "--top-p must be in (0, 1], 1 to keep every token (got " << sampling.top_p << ")");
  LLMFT_REQUIRE(!chat_mode || prompt.empty(),
                "--prompt and --chat exclude each other: --chat takes the user's message");
  LLMFT_REQUIRE(chat_mode || (system.empty() && chat_template_file.empty()),
                "--system and --chat-template go with --chat");
  require_thread_count(threads, "--threads");
  if (threads == 0) threads = default_threads(mpi);
  require_model_directory(checkpoint);
  if (mpi.rank() != 0) return 0;

  const ModelConfig config = io::resolve_model(checkpoint);
  const ChosenTokenizer chosen = choose_tokenizer(tokenizer_spec, checkpoint, config);
  const io::Tokenizer& tokenizer = *chosen.tokenizer;
  std::optional<io::ChatTemplate> chat_template;
  std::optional<int32_t> end_of_turn;
  if (chat_mode) {
    chat_template = io::ChatTemplate::find(chosen.dir, chat_template_file);
    LLMFT_REQUIRE(chat_template.has_value(),
                  "--chat needs a chat template and none was found: "
                      << io::ChatTemplate::describe_search(chosen.dir, chat_template_file)
                      << "; pass one with --chat-template");
    if (!chosen.dir.empty()) {
      end_of_turn =
          io::end_of_turn_token(*chat_template, io::read_bpe_files(chosen.dir).added_tokens);
    }
  }
  const std::vector<int32_t> stop =
      stop_tokens(config, checkpoint, chosen.dir, tokenizer, end_of_turn);
  TextGenerator generator(checkpoint, config, device, threads);
  std::mt19937_64 rng(seed);

  // Generates after `tokens`, printing the new text as it becomes final; returns it.
  const auto respond = [&](const std::vector<int32_t>& tokens, const char* what) {
    LLMFT_REQUIRE(!tokens.empty() && static_cast<int64_t>(tokens.size()) < config.max_seq_len,
                  what << " is " << tokens.size() << " tokens but the model's context is "
                       << config.max_seq_len << "; shorten it");
    io::StreamingDecoder decoder(tokenizer, tokens);
    std::string text;
    const GenerationEnd end =
        generator.generate(tokens, max_new_tokens, sampling, stop, rng, [&](int32_t token) {
          const std::string piece = decoder.push(token);
          text += piece;
          std::printf("%s", piece.c_str());
          std::fflush(stdout);
        });
    const std::string rest = decoder.finish();
    text += rest;
    std::printf("%s\n", rest.c_str());
    // The text first, also where stdout is a file and both streams share it (a batch job's
    // log): stdout is buffered there, stderr is not.
    std::fflush(stdout);
    if (end == GenerationEnd::context) {
      std::fprintf(stderr, "generate: stopped at the model's context of %lld tokens\n",
                   static_cast<long long>(config.max_seq_len));
    } else if (end == GenerationEnd::max_new_tokens) {
      std::fprintf(stderr, "generate: stopped after --max-new-tokens %d, before any end token\n",
                   max_new_tokens);
    }
    return text;
  };

  if (!chat_mode) {
    std::vector<int32_t> tokens = tokenizer.encode_with_special_tokens(prompt);
    if (tokens.empty()) tokens.push_back(tokenizer.eot_token());
    std::printf("%s", prompt.c_str());
    respond(tokens, "--prompt");
    return 0;
  }
  io::Conversation conversation;
  if (!system.empty()) conversation.push_back({"system", system});
  // One turn: the whole conversation rendered as transformers' apply_chat_template(...,
  // add_generation_prompt=True, tokenize=True) does (the text's tokens without added
  // special tokens), and the reply added to it.
  const auto turn = [&](const std::string& message) {
    conversation.push_back({"user", message});
    const std::string text = chat_template->render({conversation}, true).at(0);
    conversation.push_back({"assistant", respond(tokenizer.encode(text), "the conversation")});
  };
  const bool interactive = chat.empty() && isatty(STDIN_FILENO);
  if (!interactive) {
    turn(chat.empty() ? read_message(std::cin) : chat);
    return 0;
  }
  std::fprintf(stderr, "chat with %s; an empty line or end of input (Ctrl-D) ends it\n",
               checkpoint.c_str());
  std::string line;
  while (true) {
    std::fprintf(stderr, "> ");
    if (!std::getline(std::cin, line) || line.empty()) break;
    turn(line);
  }
  return 0;
}

}  // namespace llmft
