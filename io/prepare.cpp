#include "io/prepare.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
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

}  // namespace

PrepareStats prepare_token_file(const std::string& input, const std::string& output,
                                const Tokenizer& tok, bool show_progress) {
  PrepareStats stats;
  std::vector<int32_t> tokens;
  {
    ProgressLine progress(show_progress);
    const std::vector<std::string> documents = read_documents(
        input, [&progress](size_t done, size_t total) { progress.update("reading", done, total); });
    size_t text_bytes = 0;
    for (const std::string& document : documents) text_bytes += document.size();

    for (const std::string& document : documents) {
      const std::vector<int32_t> encoded = tok.encode(document);
      tokens.insert(tokens.end(), encoded.begin(), encoded.end());
      tokens.push_back(tok.eot_token());
      stats.bytes += document.size();
      progress.update("encoding", stats.bytes, text_bytes);
    }
    stats.documents = documents.size();
  }
  write_token_file(output, tokens, tok.vocab_size());
  stats.tokens = tokens.size();
  return stats;
}

}  // namespace llmft::io
