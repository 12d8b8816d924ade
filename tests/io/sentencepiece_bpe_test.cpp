// The SentencePiece-style BPE tokenizer (Llama 2, Mistral), the special tokens that
// tokenizer_config.json decides, the streaming decoder, and the refusals of tokenizer.json
// components llmft does not implement, on tokenizer.json files written here.
#include "io/sentencepiece_bpe.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/json.h"
#include "io/streaming_decoder.h"
#include "io/tokenizer.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

using testing::TempDir;
using Ids = std::vector<int32_t>;

constexpr char kMark[] = "\xE2\x96\x81";  // U+2581, SentencePiece's space
constexpr int32_t kUnk = 0, kBos = 1, kEos = 2;
// "<0xNN>" is id 3 + NN; then the characters and merges below.
int32_t byte_id(int byte) {
  return 3 + byte;
}
constexpr int32_t kMarkId = 259, kA = 260, kB = 261, kMarkA = 262, kMarkAB = 263;

Json special_token(int32_t id, const std::string& content) {
  return Json::object({{"id", Json::number(id)},
                       {"content", Json::string(content)},
                       {"single_word", Json::boolean(false)},
                       {"lstrip", Json::boolean(false)},
                       {"rstrip", Json::boolean(false)},
                       {"normalized", Json::boolean(false)},
                       {"special", Json::boolean(true)}});
}

Json string_pattern(const std::string& text) {
  return Json::object({{"String", Json::string(text)}});
}

// Llama 2's tokenizer.json, with a tiny vocabulary: <unk> <s> </s>, the byte tokens
// (with `byte_tokens`), "▁" "a" "b" and the merges "▁ a", "▁a b".
Json llama2_json(bool byte_tokens = true) {
  Json vocab = Json::object(
      {{"<unk>", Json::number(kUnk)}, {"<s>", Json::number(kBos)}, {"</s>", Json::number(kEos)}});
  for (int byte = 0; byte < 256; ++byte) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", byte);
    vocab.set(byte_tokens ? text : "unused" + std::to_string(byte), Json::number(byte_id(byte)));
  }
  vocab.set(kMark, Json::number(kMarkId));
  vocab.set("a", Json::number(kA));
  vocab.set("b", Json::number(kB));
  vocab.set(std::string(kMark) + "a", Json::number(kMarkA));
  vocab.set(std::string(kMark) + "ab", Json::number(kMarkAB));
  const Json merges = Json::array(
      {Json::string(std::string(kMark) + " a"), Json::string(std::string(kMark) + "a b")});
  const Json model = Json::object({{"type", Json::string("BPE")},
                                   {"dropout", Json()},
                                   {"unk_token", Json::string("<unk>")},
                                   {"continuing_subword_prefix", Json()},
                                   {"end_of_word_suffix", Json()},
                                   {"fuse_unk", Json::boolean(true)},
                                   {"byte_fallback", Json::boolean(true)},
                                   {"ignore_merges", Json::boolean(false)},
                                   {"vocab", vocab},
                                   {"merges", merges}});
  const Json normalizer = Json::object(
      {{"type", Json::string("Sequence")},
       {"normalizers", Json::array({Json::object({{"type", Json::string("Prepend")},
                                                  {"prepend", Json::string(kMark)}}),
                                    Json::object({{"type", Json::string("Replace")},
                                                  {"pattern", string_pattern(" ")},
                                                  {"content", Json::string(kMark)}})})}});
  const Json decoder = Json::object(
      {{"type", Json::string("Sequence")},
       {"decoders", Json::array({Json::object({{"type", Json::string("Replace")},
                                               {"pattern", string_pattern(kMark)},
                                               {"content", Json::string(" ")}}),
                                 Json::object({{"type", Json::string("ByteFallback")}}),
                                 Json::object({{"type", Json::string("Fuse")}}),
                                 Json::object({{"type", Json::string("Strip")},
                                               {"content", Json::string(" ")},
                                               {"start", Json::number(1)},
                                               {"stop", Json::number(0)}})})}});
  const Json bos_item =
      Json::object({{"SpecialToken",
                     Json::object({{"id", Json::string("<s>")}, {"type_id", Json::number(0)}})}});
  const Json sequence_item = Json::object(
      {{"Sequence", Json::object({{"id", Json::string("A")}, {"type_id", Json::number(0)}})}});
  const Json post_processor = Json::object(
      {{"type", Json::string("TemplateProcessing")},
       {"single", Json::array({bos_item, sequence_item})},
       {"special_tokens",
        Json::object({{"<s>", Json::object({{"id", Json::string("<s>")},
                                            {"ids", Json::array({Json::number(kBos)})},
                                            {"tokens", Json::array({Json::string("<s>")})}})}})}});
  return Json::object(
      {{"version", Json::string("1.0")},
       {"added_tokens", Json::array({special_token(kUnk, "<unk>"), special_token(kBos, "<s>"),
                                     special_token(kEos, "</s>")})},
       {"normalizer", normalizer},
       {"pre_tokenizer", Json()},
       {"post_processor", post_processor},
       {"decoder", decoder},
       {"model", model}});
}

Json with(Json json, const std::string& key, Json value) {
  json.set(key, std::move(value));
  return json;
}

Json with_model_option(Json json, const std::string& key, Json value) {
  Json model = json.at("model");
  model.set(key, std::move(value));
  json.set("model", model);
  return json;
}

std::string load_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST_CASE("SentencePiece BPE marks spaces, prepends a mark and merges by rank") {
  TempDir dir;
  const auto tok = make_tokenizer(dir.write("tokenizer.json", llama2_json().dump()));
  CHECK(tok->name().rfind("bpe:", 0) == 0);
  CHECK(tok->vocab_size() == 264);
  CHECK(tok->encode("ab a") == Ids{kMarkAB, kMarkA});
  CHECK(tok->encode(" a") == Ids{kMarkId, kMarkA});  // the prepended mark and the space's
  CHECK(tok->encode("").empty());
  // Each piece between added tokens gets its own mark.
  CHECK(tok->encode("a</s>ab") == Ids{kMarkA, kEos, kMarkAB});
  CHECK(tok->decode({kMarkAB, kMarkA}) == "ab a");
  CHECK(tok->decode({kMarkId, kMarkA}) == " a");
}

TEST_CASE("SentencePiece BPE falls back to byte tokens, then to one fused unk") {
  TempDir dir;
  const auto tok = make_tokenizer(dir.write("tokenizer.json", llama2_json().dump()));
  // "é" (C3 A9) is not in the vocabulary; neither is the invalid byte FF.
  CHECK(tok->encode("a\xC3\xA9") == Ids{kMarkA, byte_id(0xC3), byte_id(0xA9)});
  CHECK(tok->decode(tok->encode("a\xC3\xA9")) == "a\xC3\xA9");
  CHECK(tok->encode("\xFF") == Ids{kMarkId, byte_id(0xFF)});
  // Byte tokens that are not UTF-8 decode as one U+FFFD each, as in `tokenizers`.
  CHECK(tok->decode({kA, byte_id(0xC3), kB}) ==
        "a\xEF\xBF\xBD"
        "b");

  const auto no_bytes = make_tokenizer(dir.write("tokenizer.json", llama2_json(false).dump()));
  CHECK(no_bytes->encode("a\xC3\xA9\xC3\xA9") == Ids{kMarkA, kUnk});
  const Json unfused = with_model_option(llama2_json(false), "fuse_unk", Json::boolean(false));
  const auto separate = make_tokenizer(dir.write("tokenizer.json", unfused.dump()));
  CHECK(separate->encode("a\xC3\xA9\xC3\xA9") == Ids{kMarkA, kUnk, kUnk});
}

TEST_CASE("the template and tokenizer_config.json decide BOS and EOS") {
  TempDir dir;
  const std::string path = dir.write("tokenizer.json", llama2_json().dump());
  auto tok = make_tokenizer(path);
  CHECK(tok->bos_token() == kBos);
  CHECK(tok->eot_token() == kEos);
  CHECK(tok->encode_with_special_tokens("a") == Ids{kBos, kMarkA});
  CHECK(tok->encode("a") == Ids{kMarkA});

  dir.write("tokenizer_config.json", R"({"add_bos_token": false, "add_eos_token": true,
      "bos_token": {"content": "<s>"}, "eos_token": "</s>"})");
  tok = make_tokenizer(path);
  CHECK_FALSE(tok->bos_token().has_value());
  CHECK(tok->encode_with_special_tokens("a") == Ids{kMarkA, kEos});

  dir.write("tokenizer_config.json", R"({"eos_token": "<unk>"})");
  CHECK(make_tokenizer(path)->eot_token() == kUnk);
  dir.write("tokenizer_config.json", R"({"eos_token": "<|eot_id|>"})");
  CHECK(load_error([&] {
          make_tokenizer(path);
        }).find("tokenizer_config.json: eos_token \"<|eot_id|>\" is not a token") !=
        std::string::npos);
  dir.write("tokenizer_config.json", R"({"add_bos_token": "yes"})");
  CHECK(load_error([&] { make_tokenizer(path); }).find("add_bos_token must be true or false") !=
        std::string::npos);
}

TEST_CASE("the Metaspace pre-tokenizer marks the start of the text only, unless marked") {
  TempDir dir;
  const Json metaspace = Json::object({{"type", Json::string("Metaspace")},
                                       {"replacement", Json::string(kMark)},
                                       {"prepend_scheme", Json::string("first")},
                                       {"split", Json::boolean(false)}});
  const Json json = with(with(llama2_json(), "normalizer", Json()), "pre_tokenizer", metaspace);
  const auto tok = make_tokenizer(dir.write("tokenizer.json", json.dump()));
  CHECK(tok->encode("a</s>ab") == Ids{kMarkA, kEos, kA, kB});
  CHECK(tok->encode(" a") == Ids{kMarkA});
}

TEST_CASE("the streaming decoder holds back bytes until they make a character") {
  TempDir dir;
  const auto tok = make_tokenizer(dir.write("tokenizer.json", llama2_json().dump()));
  StreamingDecoder stream(*tok, {kBos});
  CHECK(stream.push(kMarkA) == " a");
  CHECK(stream.push(byte_id(0xC3)).empty());
  CHECK(stream.push(byte_id(0xA9)) == "\xC3\xA9");
  CHECK(stream.push(byte_id(0xE2)).empty());
  // The run C3 A9 E2 is no UTF-8: `tokenizers` decodes each of its bytes as U+FFFD, and
  // the stream hands that out again from the changed character.
  CHECK(stream.finish() == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(stream.finish().empty());

  StreamingDecoder from_start(*tok, {});
  CHECK(from_start.push(kMarkA) == "a");  // the decoder strips the text's leading space
  CHECK(from_start.push(kMarkA) == " a");
}

TEST_CASE("tokenizer.json components llmft does not implement are refused by name") {
  TempDir dir;
  const auto message_for = [&](const Json& json) {
    const std::string path = dir.write("tokenizer.json", json.dump());
    const std::string message = load_error([&] { make_tokenizer(path); });
    CHECK(message.find(path) != std::string::npos);
    return message;
  };
  CHECK(message_for(with_model_option(llama2_json(), "type", Json::string("Unigram")))
            .find("model.type is \"Unigram\"") != std::string::npos);
  const Json nfkc = Json::object({{"type", Json::string("NFKC")}});
  CHECK(message_for(with(llama2_json(), "normalizer", nfkc))
            .find("normalizer NFKC is not supported") != std::string::npos);
  const Json lowercase = Json::object(
      {{"type", Json::string("Sequence")},
       {"normalizers", Json::array({Json::object({{"type", Json::string("Lowercase")}})})}});
  CHECK(message_for(with(llama2_json(), "normalizer", lowercase))
            .find("normalizer.normalizers[0] Lowercase is not supported") != std::string::npos);
  CHECK(message_for(with(llama2_json(), "decoder", Json::object({{"type", Json::string("Fuse")}})))
            .find("decoder Fuse is not supported") != std::string::npos);
  CHECK(message_for(with_model_option(llama2_json(), "dropout", Json::number(0.5)))
            .find("model.dropout") != std::string::npos);
  const Json split = Json::object(
      {{"type", Json::string("Sequence")},
       {"pretokenizers",
        Json::array({Json::object({{"type", Json::string("Split")},
                                   {"pattern", Json::object({{"Regex", Json::string("\\w+")}})},
                                   {"behavior", Json::string("Isolated")},
                                   {"invert", Json::boolean(false)}}),
                     Json::object({{"type", Json::string("ByteLevel")},
                                   {"add_prefix_space", Json::boolean(false)},
                                   {"use_regex", Json::boolean(false)}})})}});
  const Json byte_level_decoder = Json::object({{"type", Json::string("ByteLevel")}});
  const Json other_split =
      with(with(with(llama2_json(), "normalizer", Json()), "pre_tokenizer", split), "decoder",
           byte_level_decoder);
  CHECK(message_for(with_model_option(other_split, "byte_fallback", Json::boolean(false)))
            .find("pre_tokenizer.pretokenizers[0] Split with pattern {\"Regex\":\"\\\\w+\"} is not "
                  "supported") != std::string::npos);
  Json normalized_token = special_token(kBos, "<s>");
  normalized_token.set("normalized", Json::boolean(true));
  CHECK(message_for(with(llama2_json(), "added_tokens", Json::array({normalized_token})))
            .find("sets normalized") != std::string::npos);
}

}  // namespace
}  // namespace llmft::io
