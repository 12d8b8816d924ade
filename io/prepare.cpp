#include "io/prepare.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/chat_template.h"
#include "io/conversation_targets.h"
#include "io/progress.h"
#include "io/text_source.h"
#include "io/token_file.h"

namespace llmft::io {
namespace {

// The tokens of the output file, built document by document, with the loss mask and
// where each sample begins.
struct MaskedTokens {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> loss_mask;  // loss_mask[i] == 1 when tokens[i] is a training target
  std::vector<uint64_t> sample_starts;
  size_t targets = 0;

  void append(const std::vector<int32_t>& more, bool are_targets) {
    tokens.insert(tokens.end(), more.begin(), more.end());
    loss_mask.insert(loss_mask.end(), more.size(), are_targets ? 1 : 0);
    if (are_targets) targets += more.size();
  }
  void append_masked(const std::vector<int32_t>& more, const std::vector<uint8_t>& mask) {
    tokens.insert(tokens.end(), more.begin(), more.end());
    loss_mask.insert(loss_mask.end(), mask.begin(), mask.end());
    targets += static_cast<size_t>(std::count(mask.begin(), mask.end(), 1));
  }
};

size_t text_bytes(const Document& document) {
  size_t bytes = document.prompt.size() + document.text.size();
  for (const ChatMessage& message : document.conversation) bytes += message.content.size();
  return bytes;
}

std::string where_of(const std::string& input, const Document& document) {
  return input + ":" + std::to_string(document.line);
}

// Each conversation of `documents` rendered by the template `templates` finds, in order;
// empty when there are none.
std::vector<std::string> render_conversations(const std::string& input,
                                              const std::vector<Document>& documents,
                                              const ChatTemplateSearch& templates,
                                              PrepareStats& stats) {
  std::vector<Conversation> conversations;
  std::vector<std::string> names;
  for (const Document& document : documents) {
    if (!document.is_conversation()) continue;
    conversations.push_back(document.conversation);
    names.push_back(where_of(input, document));
  }
  if (conversations.empty()) return {};
  const std::optional<ChatTemplate> chat_template =
      ChatTemplate::find(templates.tokenizer_dir, templates.explicit_file);
  LLMFT_REQUIRE(chat_template.has_value(),
                names.front() << " is a conversation, but no chat template was found ("
                              << ChatTemplate::describe_search(templates.tokenizer_dir,
                                                               templates.explicit_file)
                              << "); pass the model's template with --chat-template FILE");
  stats.conversations = conversations.size();
  stats.chat_template = chat_template->origin();
  return chat_template->render(conversations, /*add_generation_prompt=*/false, names);
}

}  // namespace

PrepareStats prepare_token_file(const std::string& input, const std::string& output,
                                const Tokenizer& tok, const ChatTemplateSearch& templates) {
  PrepareStats stats;
  MaskedTokens out;
  // Whether the documents are samples: JSONL with a prompt/response or conversation line. A
  // file of {"text"} lines only is one stream, as plain text is (a sample longer than the
  // window would lose its end; a stream loses nothing).
  bool samples = false;
  {
    const std::string reading = "prepare: reading " + input;
    Progress progress(reading, 0, ProgressCount::bytes());
    bool sized = false;  // whether the reading phase knows the file's size yet
    const std::vector<Document> documents = read_documents(input, [&](size_t done, size_t total) {
      if (!sized) progress.next_phase(reading, total);
      sized = true;
      progress.update(done);
    });
    samples = std::any_of(documents.begin(), documents.end(), [](const Document& document) {
      return document.is_conversation() || !document.prompt.empty();
    });
    size_t total_bytes = 0;
    for (const Document& document : documents) total_bytes += text_bytes(document);
    const std::vector<std::string> rendered =
        render_conversations(input, documents, templates, stats);
    progress.next_phase("prepare: encoding", total_bytes);

    size_t next_rendered = 0;
    for (const Document& document : documents) {
      const size_t start = out.tokens.size();
      if (samples) out.sample_starts.push_back(start);
      if (document.is_conversation()) {
        const ConversationSample sample =
            encode_conversation(rendered[next_rendered++], document.conversation, tok,
                                where_of(input, document), stats.chat_template);
        out.append_masked(sample.tokens, sample.targets);
        stats.turns_without_end += sample.turns_without_end;
      } else {
        // BOS opens the document: part of the prompt when there is one, else a target.
        std::vector<int32_t> opening = tok.encode(document.prompt);
        if (const std::optional<int32_t> bos = tok.bos_token()) {
          opening.insert(opening.begin(), *bos);
        }
        out.append(opening, /*are_targets=*/document.prompt.empty());
        out.append(tok.encode(document.text), /*are_targets=*/true);
        out.append({tok.eot_token()}, /*are_targets=*/true);
      }
      stats.longest_sample = std::max(stats.longest_sample, out.tokens.size() - start);
      stats.bytes += text_bytes(document);
      progress.update(stats.bytes);
    }
    stats.documents = documents.size();
  }
  write_token_file(output, out.tokens, tok.vocab_size(), out.loss_mask, out.sample_starts);
  stats.tokens = out.tokens.size();
  stats.target_tokens = out.targets;
  stats.samples = out.sample_starts.size();
  if (!samples) stats.longest_sample = 0;
  return stats;
}

}  // namespace llmft::io
