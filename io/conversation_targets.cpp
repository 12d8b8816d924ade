#include "io/conversation_targets.h"

#include <algorithm>
#include <string_view>

#include "core/error.h"

namespace llmft::io {
namespace {

constexpr std::string_view kWhiteSpace = " \t\n\r\f\v";

std::string_view trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(kWhiteSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kWhiteSpace) + 1 - begin);
}

struct ByteSpan {
  size_t begin = 0;
  size_t end = 0;
};

// Whether an added token starts at the first byte of `text` from `at` that is not white space.
bool closed_by_added_token(std::string_view text, size_t at, const std::vector<bool>& added_at) {
  const size_t next = text.find_first_not_of(kWhiteSpace, at);
  return next != std::string_view::npos && added_at[next];
}

// Where `content` is in `text` at or after `from`, as given or trimmed; false if nowhere.
// The first place that an added token closes wins (a short content like "a" also occurs in
// the role header before it, "<|im_start|>assistant"); without one, the first place.
bool locate(std::string_view text, const std::string& content, size_t from,
            const std::vector<bool>& added_at, ByteSpan& found) {
  bool any = false;
  for (const std::string_view wanted : {std::string_view(content), trimmed(content)}) {
    if (wanted.empty()) continue;
    for (size_t at = text.find(wanted, from); at != std::string_view::npos;
         at = text.find(wanted, at + 1)) {
      if (closed_by_added_token(text, at + wanted.size(), added_at)) {
        found = {at, at + wanted.size()};
        return true;
      }
      if (!any) found = {at, at + wanted.size()};
      any = true;
    }
  }
  return any;
}

// The content spans of the assistant messages, in order; `added_at[i]` says whether an
// added token starts at byte i of `rendered`.
std::vector<ByteSpan> assistant_contents(const std::string& rendered,
                                         const Conversation& conversation,
                                         const std::vector<bool>& added_at,
                                         const std::string& where,
                                         const std::string& template_origin) {
  std::vector<ByteSpan> spans;
  size_t cursor = 0;
  for (size_t i = 0; i < conversation.size(); ++i) {
    const ChatMessage& message = conversation[i];
    ByteSpan found;
    const bool located = locate(rendered, message.content, cursor, added_at, found);
    if (message.role == "assistant") {
      LLMFT_REQUIRE(located, where << ": the content of message " << i + 1
                                   << " (assistant) is not in the text chat template "
                                   << template_origin << " renders, so its tokens cannot be "
                                   << "told apart for training; use a template that writes "
                                   << "assistant messages as they are (or trimmed)");
      spans.push_back(found);
    }
    if (located) cursor = found.end;
  }
  return spans;
}

}  // namespace

ConversationSample encode_conversation(const std::string& rendered,
                                       const Conversation& conversation, const Tokenizer& tok,
                                       const std::string& where,
                                       const std::string& template_origin) {
  ConversationSample sample;
  std::vector<size_t> starts;
  sample.tokens = tok.encode_with_offsets(rendered, starts);
  const size_t n = sample.tokens.size();
  std::vector<bool> added_at(rendered.size() + 1, false);
  for (size_t i = 0; i < n; ++i) added_at[starts[i]] = tok.is_added_token(sample.tokens[i]);
  std::vector<ByteSpan> turns =
      assistant_contents(rendered, conversation, added_at, where, template_origin);
  const auto token_end = [&](size_t i) { return i + 1 < n ? starts[i + 1] : rendered.size(); };
  // Extend each turn through the added token that closes it.
  for (ByteSpan& turn : turns) {
    const size_t next =
        std::min(rendered.find_first_not_of(kWhiteSpace, turn.end), rendered.size());
    const auto closing =
        std::find_if(starts.begin(), starts.end(), [&](size_t start) { return start >= next; });
    const auto j = static_cast<size_t>(closing - starts.begin());
    if (j < n && starts[j] == next && tok.is_added_token(sample.tokens[j])) {
      turn.end = token_end(j);
    } else {
      ++sample.turns_without_end;
    }
  }
  sample.targets.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const ByteSpan& turn : turns) {
      if (starts[i] < turn.end && token_end(i) > turn.begin) sample.targets[i] = 1;
    }
  }
  return sample;
}

}  // namespace llmft::io
