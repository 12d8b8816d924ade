// The end-of-turn token of a chat template (io/end_of_turn.h).
#include "io/end_of_turn.h"

#include <string_view>

#include "core/error.h"

namespace llmft::io {

std::optional<int32_t> end_of_turn_token(
    const ChatTemplate& chat_template,
    const std::vector<std::pair<std::string, int64_t>>& added_tokens) {
  // A reply no template produces on its own, so that finding it finds the reply.
  const std::string reply = "llmft end-of-turn probe 7f3a";
  const Conversation turn = {{"user", "Hello"}, {"assistant", reply}};
  const std::string text = chat_template.render({turn}, false).at(0);
  const size_t at = text.rfind(reply);
  LLMFT_REQUIRE(at != std::string::npos, "chat template " << chat_template.origin()
                                                          << " drops the assistant's reply "
                                                             "from the conversation it renders");
  std::string_view after(text);
  after.remove_prefix(at + reply.size());
  while (!after.empty() && (after.front() == ' ' || after.front() == '\n' ||
                            after.front() == '\t' || after.front() == '\r')) {
    after.remove_prefix(1);
  }
  std::optional<int32_t> token;
  size_t longest = 0;
  for (const auto& [content, id] : added_tokens) {
    if (!content.empty() && content.size() > longest &&
        after.substr(0, content.size()) == content) {
      token = static_cast<int32_t>(id);
      longest = content.size();
    }
  }
  return token;
}

}  // namespace llmft::io
