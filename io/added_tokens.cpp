#include "io/added_tokens.h"

namespace llmft::io {

void AddedTokens::split(std::string_view text,
                        const std::function<void(std::string_view, size_t)>& on_piece,
                        const std::function<void(int32_t)>& on_token) const {
  // Where each added token occurs next, at or after `pos` (npos: nowhere).
  std::vector<size_t> next_at(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) next_at[i] = text.find(tokens_[i].text);
  for (size_t pos = 0;;) {
    const Token* match = nullptr;
    size_t match_at = std::string_view::npos;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (next_at[i] < pos) next_at[i] = text.find(tokens_[i].text, pos);
      const bool longer = match != nullptr && tokens_[i].text.size() > match->text.size();
      if (next_at[i] < match_at || (next_at[i] == match_at && longer)) {
        match = &tokens_[i];
        match_at = next_at[i];
      }
    }
    on_piece(text.substr(pos, match_at - pos), pos);
    if (match == nullptr) return;
    on_token(match->id);
    pos = match_at + match->text.size();
  }
}

}  // namespace llmft::io
