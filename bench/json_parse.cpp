// bench_json_parse: how fast Json::parse reads the JSON llmft meets, against nlohmann-json's
// own DOM parse (nlohmann::json::parse) of the same text in the same run. Two inputs, made
// here from a fixed seed: a JSONL dataset of --megabytes (text, prompt/response and
// conversation rows with escapes and UTF-8, parsed line by line as `llmft prepare` does),
// and a safetensors header of a --layers-layer Llama (one object of tensor entries, parsed
// whole as a weight file's open does). Each figure is the fastest of --repeats runs.
//
// usage: bench_json_parse [--megabytes 5] [--layers 32] [--repeats 5]
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_args.h"
#include "io/json.h"
#include "launch/guarded_main.h"

using namespace llmft;
using io::Json;

namespace {

// Words of prose: ASCII, two-byte and three-byte UTF-8, and characters JSON must escape.
const char* const kWords[] = {"the",         "model",        "learns",
                              "from",        "each",         "token",
                              "caf\xC3\xA9", "na\xC3\xAFve", "\xE4\xB8\xAD\xE6\x96\x87",
                              "quote\"d",    "line\nbreak",  "tab\there",
                              "back\\slash", "loss",         "step",
                              "gradient"};

std::string prose(std::mt19937_64& rng, size_t words) {
  std::string text;
  for (size_t i = 0; i < words; ++i) {
    if (i > 0) text += ' ';
    text += kWords[rng() % std::size(kWords)];
  }
  return text;
}

// One JSONL row in one of the forms llmft prepare reads.
std::string jsonl_row(std::mt19937_64& rng, size_t index) {
  Json row = Json::object({});
  switch (index % 3) {
    case 0:
      row.set("text", Json::string(prose(rng, 50 + rng() % 400)));
      break;
    case 1:
      row.set("prompt", Json::string(prose(rng, 10 + rng() % 60)));
      row.set("response", Json::string(prose(rng, 20 + rng() % 200)));
      break;
    default: {
      Json messages = Json::array({});
      for (const char* role : {"system", "user", "assistant", "user", "assistant"}) {
        messages.push_back(Json::object(
            {{"role", Json::string(role)}, {"content", Json::string(prose(rng, 5 + rng() % 80))}}));
      }
      row.set("messages", std::move(messages));
    }
  }
  row.set("id", Json::number(static_cast<double>(index)));
  row.set("score", Json::number(static_cast<double>(rng() % 1000000) / 999983.0));
  return row.dump();
}

std::vector<std::string> jsonl_lines(size_t bytes) {
  std::mt19937_64 rng(34);
  std::vector<std::string> lines;
  for (size_t total = 0; total < bytes;) {
    lines.push_back(jsonl_row(rng, lines.size()));
    total += lines.back().size() + 1;
  }
  return lines;
}

// The header of a Llama checkpoint of `layers` layers (hidden 4096) in one safetensors file.
std::string safetensors_header(int layers) {
  Json header = Json::object({{"__metadata__", Json::object({{"format", Json::string("pt")}})}});
  double offset = 0;
  auto add = [&](const std::string& name, double rows, double columns) {
    const double end = offset + rows * columns * 2;
    header.set(
        name,
        Json::object({{"dtype", Json::string("BF16")},
                      {"shape", Json::array({Json::number(rows), Json::number(columns)})},
                      {"data_offsets", Json::array({Json::number(offset), Json::number(end)})}}));
    offset = end;
  };
  add("model.embed_tokens.weight", 128256, 4096);
  for (int l = 0; l < layers; ++l) {
    const std::string prefix = "model.layers." + std::to_string(l) + ".";
    for (const char* p : {"q_proj", "o_proj"}) {
      add(prefix + "self_attn." + p + ".weight", 4096, 4096);
    }
    for (const char* p : {"k_proj", "v_proj"}) {
      add(prefix + "self_attn." + p + ".weight", 1024, 4096);
    }
    for (const char* p : {"gate_proj", "up_proj"})
      add(prefix + "mlp." + p + ".weight", 14336, 4096);
    add(prefix + "mlp.down_proj.weight", 4096, 14336);
    add(prefix + "input_layernorm.weight", 1, 4096);
    add(prefix + "post_attention_layernorm.weight", 1, 4096);
  }
  add("model.norm.weight", 1, 4096);
  add("lm_head.weight", 128256, 4096);
  return header.dump();
}

// Times both parsers over `documents` (each parsed `passes` times) and prints one line.
void compare(const char* what, const std::vector<std::string>& documents, int passes, int repeats) {
  size_t bytes = 0;
  for (const std::string& d : documents) bytes += d.size();
  size_t sink = 0;  // keeps the parses from being optimised away
  auto parse_ours = [&] {
    for (int p = 0; p < passes; ++p) {
      for (const std::string& d : documents) sink += Json::parse(d).as_object().size();
    }
  };
  auto parse_peer = [&] {
    for (int p = 0; p < passes; ++p) {
      for (const std::string& d : documents) sink += nlohmann::json::parse(d).size();
    }
  };
  const double llmft_ms = 1e3 * bench::best_seconds(repeats, parse_ours);
  const double peer_ms = 1e3 * bench::best_seconds(repeats, parse_peer);
  const double megabytes = static_cast<double>(bytes) * passes / 1e6;
  std::printf(
      "%s (%.2f MB parsed): llmft %.1f ms (%.0f MB/s), nlohmann DOM %.1f ms (%.0f MB/s): %s\n",
      what, megabytes, llmft_ms, megabytes / llmft_ms * 1e3, peer_ms, megabytes / peer_ms * 1e3,
      bench::peer_ratio(peer_ms, llmft_ms).c_str());
  LLMFT_REQUIRE(sink > 0, "no members parsed");
}

int run(int argc, char** argv) {
  const bench::Args args = bench::parse_args(
      argc, argv, {{"megabytes", "5"}, {"layers", "32"}, {"repeats", "5"}}, __FILE__);
  const double megabytes = std::stod(args.at("megabytes"));
  const int repeats = std::stoi(args.at("repeats"));
  LLMFT_REQUIRE(megabytes > 0 && repeats > 0, "--megabytes and --repeats must be positive");

  const std::vector<std::string> lines = jsonl_lines(static_cast<size_t>(megabytes * 1e6));
  compare(("JSONL, " + std::to_string(lines.size()) + " lines").c_str(), lines, 1, repeats);

  const std::string header = safetensors_header(std::stoi(args.at("layers")));
  // Enough passes over the header to time about as many bytes as the JSONL file.
  const int passes = std::max(1, static_cast<int>(megabytes * 1e6 / header.size()));
  compare(("safetensors header, " + std::to_string(header.size() / 1024) + " KiB x " +
           std::to_string(passes))
              .c_str(),
          {header}, passes, repeats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return guarded_main("bench_json_parse", run, argc, argv);
}
