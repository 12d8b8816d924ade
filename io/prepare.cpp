#include "io/prepare.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "io/text_source.h"
#include "io/token_file.h"

namespace llmft::io {
namespace {

// Keeps one stderr line up to date, rewriting it only when the phase or percentage
// changes, and ends the line when destroyed.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() {
    if (printed_width_ > 0) std::fputc('\n', stderr);
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const char* phase, size_t done, size_t total) {
    if (!enabled_) return;
    const int percent = total == 0 ? 100 : static_cast<int>(done * 100 / total);
    if (phase == last_phase_ && percent == last_percent_) return;
    last_phase_ = phase;
    last_percent_ = percent;
    const int width =
        std::fprintf(stderr, "\rprepare: %s %d%% (%zu/%zu bytes)", phase, percent, done, total);
    // Blank out what is left of a longer previous line.
    if (width < printed_width_) std::fprintf(stderr, "%*s", printed_width_ - width, "");
    printed_width_ = std::max(width, printed_width_);
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  int printed_width_ = 0;  // widest line printed so far, in characters
  std::string last_phase_;
  int last_percent_ = -1;
};

// The tokens of the output file, built document by document, with the loss mask.
struct MaskedTokens {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> loss_mask;  // loss_mask[i] == 1 when tokens[i] is a training target
  size_t targets = 0;

  void append(const std::vector<int32_t>& more, bool are_targets) {
    tokens.insert(tokens.end(), more.begin(), more.end());
    loss_mask.insert(loss_mask.end(), more.size(), are_targets ? 1 : 0);
    if (are_targets) targets += more.size();
  }
};

size_t text_bytes(const Document& document) {
  return document.prompt.size() + document.text.size();
}

}  // namespace

PrepareStats prepare_token_file(const std::string& input, const std::string& output,
                                const Tokenizer& tok, bool show_progress) {
  PrepareStats stats;
  MaskedTokens out;
  {
    ProgressLine progress(show_progress);
    const std::vector<Document> documents = read_documents(
        input, [&progress](size_t done, size_t total) { progress.update("reading", done, total); });
    size_t total_bytes = 0;
    for (const Document& document : documents) total_bytes += text_bytes(document);

    for (const Document& document : documents) {
      // BOS opens the document: part of the prompt when there is one, else a target.
      std::vector<int32_t> opening = tok.encode(document.prompt);
      if (const std::optional<int32_t> bos = tok.bos_token()) opening.insert(opening.begin(), *bos);
      out.append(opening, /*are_targets=*/document.prompt.empty());
      out.append(tok.encode(document.text), /*are_targets=*/true);
      out.append({tok.eot_token()}, /*are_targets=*/true);
      stats.bytes += text_bytes(document);
      progress.update("encoding", stats.bytes, total_bytes);
    }
    stats.documents = documents.size();
  }
  write_token_file(output, out.tokens, tok.vocab_size(), out.loss_mask);
  stats.tokens = out.tokens.size();
  stats.target_tokens = out.targets;
  return stats;
}

}  // namespace llmft::io
