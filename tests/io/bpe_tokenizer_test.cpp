#include "io/bpe_tokenizer.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/gpt2_pretokenizer.h"
#include "io/json.h"
#include "io/llama3_pretokenizer.h"
#include "io/tokenizer.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// GPT-2's bytes_to_unicode as its encoder.py states it: the printable bytes keep their
// code point, the others take 256, 257, ... in byte order. Written apart from the
// library's table so that a test vocabulary checks it.
std::string byte_symbol(unsigned char byte) {
  const auto printable = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  };
  int code_point = byte;
  if (!printable(byte)) {
    code_point = 256;
    for (int b = 0; b < byte; ++b) code_point += printable(b) ? 0 : 1;
  }
  if (code_point < 0x80) return std::string(1, static_cast<char>(code_point));
  return {static_cast<char>(0xC0 | (code_point >> 6)),
          static_cast<char>(0x80 | (code_point & 0x3F))};
}

// How a vocabulary spells the raw bytes `raw`.
std::string symbols(const std::string& raw) {
  std::string text;
  for (char c : raw) text += byte_symbol(static_cast<unsigned char>(c));
  return text;
}

TEST_CASE("the test's byte symbols are GPT-2's") {
  CHECK(byte_symbol('a') == "a");
  CHECK(byte_symbol(' ') == "\xC4\xA0");   // U+0120
  CHECK(byte_symbol('\n') == "\xC4\x8A");  // U+010A
  CHECK(byte_symbol('\t') == "\xC4\x89");  // U+0109
  CHECK(byte_symbol(0x00) == "\xC4\x80");  // U+0100
  CHECK(byte_symbol(0x7F) == "\xC4\xA1");  // U+0121
  CHECK(byte_symbol(0xAD) == "\xC5\x83");  // U+0143
  CHECK(byte_symbol(0xFF) == "\xC3\xBF");  // U+00FF
}

// A byte-level BPE written out as files: token b is the symbol of byte b, the results of
// `merges` (raw bytes, lowest rank first) follow from 256, then "<|endoftext|>".
struct TinyBpe {
  std::vector<std::pair<std::string, std::string>> merges;

  // The id of a byte, of a merge's result, or of "<|endoftext|>".
  int32_t id(const std::string& raw) const {
    if (raw.size() == 1) return static_cast<unsigned char>(raw[0]);
    for (size_t i = 0; i < merges.size(); ++i) {
      if (merges[i].first + merges[i].second == raw) return static_cast<int32_t>(256 + i);
    }
    REQUIRE(raw == "<|endoftext|>");
    return static_cast<int32_t>(256 + merges.size());
  }

  Json vocab() const {
    Json vocab = Json::object({});
    for (int b = 0; b < 256; ++b)
      vocab.set(byte_symbol(static_cast<unsigned char>(b)), Json::number(b));
    for (const auto& [left, right] : merges) {
      vocab.set(symbols(left + right), Json::number(id(left + right)));
    }
    vocab.set("<|endoftext|>", Json::number(id("<|endoftext|>")));
    return vocab;
  }

  std::string merges_txt() const {
    std::string text = "#version: 0.2\n";
    for (const auto& [left, right] : merges) text += symbols(left) + " " + symbols(right) + "\n";
    return text;
  }

  // What `tokenizers` saves: merges as ["a", "b"] pairs, or as "a b" strings.
  Json tokenizer_json(bool merges_as_pairs) const {
    Json merge_list = Json::array({});
    for (const auto& [left, right] : merges) {
      merge_list.push_back(
          merges_as_pairs ? Json::array({Json::string(symbols(left)), Json::string(symbols(right))})
                          : Json::string(symbols(left) + " " + symbols(right)));
    }
    const Json byte_level = Json::object({{"type", Json::string("ByteLevel")},
                                          {"add_prefix_space", Json::boolean(false)},
                                          {"trim_offsets", Json::boolean(true)},
                                          {"use_regex", Json::boolean(true)}});
    const Json eot = Json::object({{"id", Json::number(id("<|endoftext|>"))},
                                   {"content", Json::string("<|endoftext|>")},
                                   {"single_word", Json::boolean(false)},
                                   {"lstrip", Json::boolean(false)},
                                   {"rstrip", Json::boolean(false)},
                                   {"normalized", Json::boolean(false)},
                                   {"special", Json::boolean(true)}});
    const Json model = Json::object({{"type", Json::string("BPE")},
                                     {"dropout", Json()},
                                     {"unk_token", Json()},
                                     {"continuing_subword_prefix", Json()},
                                     {"end_of_word_suffix", Json()},
                                     {"fuse_unk", Json::boolean(false)},
                                     {"byte_fallback", Json::boolean(false)},
                                     {"ignore_merges", Json::boolean(false)},
                                     {"vocab", vocab()},
                                     {"merges", merge_list}});
    return Json::object({{"version", Json::string("1.0")},
                         {"truncation", Json()},
                         {"padding", Json()},
                         {"added_tokens", Json::array({eot})},
                         {"normalizer", Json()},
                         {"pre_tokenizer", byte_level},
                         {"post_processor", byte_level},
                         {"decoder", byte_level},
                         {"model", model}});
  }
};

// Writes `bpe` as GPT-2's vocab.json + merges.txt into `dir`; returns the directory.
std::string write_gpt2_files(const TempDir& dir, const TinyBpe& bpe) {
  dir.write("vocab.json", bpe.vocab().dump());
  dir.write("merges.txt", bpe.merges_txt());
  return dir.path().string();
}

std::vector<std::string> pretokens(std::string_view text) {
  std::vector<std::string> pieces;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = gpt2_pretoken_end(text, begin);
    pieces.emplace_back(text.substr(begin, end - begin));
    begin = end;
  }
  return pieces;
}

using Pieces = std::vector<std::string>;

TEST_CASE("GPT-2 pre-tokenization splits off contractions, case-sensitively") {
  CHECK(pretokens("I'm you're we've they'll he'd it's don't") ==
        Pieces{"I", "'m", " you", "'re", " we", "'ve", " they", "'ll", " he", "'d", " it", "'s",
               " don", "'t"});
  CHECK(pretokens("I'M 'sam ''s") == Pieces{"I", "'", "M", " '", "sam", " ''", "s"});
}

TEST_CASE("GPT-2 pre-tokenization separates letters, numbers and punctuation") {
  CHECK(pretokens("abc123 45x 3.14") == Pieces{"abc", "123", " 45", "x", " 3", ".", "14"});
  CHECK(pretokens("hello!!! ...?") == Pieces{"hello", "!!!", " ...?"});
  CHECK(pretokens("h\xC3\xA9llo w\xC3\xB6rld") == Pieces{"h\xC3\xA9llo", " w\xC3\xB6rld"});
  // "数字123個": CJK letters, then digits; "x²Ⅻ": ² (No) and Ⅻ (Nl) are numbers.
  CHECK(pretokens("\xE6\x95\xB0\xE5\xAD\x97"
                  "123\xE5\x80\x8B") == Pieces{"\xE6\x95\xB0\xE5\xAD\x97", "123", "\xE5\x80\x8B"});
  CHECK(pretokens("x\xC2\xB2\xE2\x85\xAB") == Pieces{"x", "\xC2\xB2\xE2\x85\xAB"});
}

TEST_CASE("GPT-2 pre-tokenization leaves the last space of a run to the next word") {
  CHECK(pretokens("a   b") == Pieces{"a", "  ", " b"});
  CHECK(pretokens("a  ") == Pieces{"a", "  "});
  CHECK(pretokens("a ") == Pieces{"a", " "});
  CHECK(pretokens("  \n") == Pieces{"  \n"});
  CHECK(pretokens("a\n\nb") == Pieces{"a", "\n", "\n", "b"});
  CHECK(pretokens("a\n\n b") == Pieces{"a", "\n\n", " b"});
  CHECK(pretokens("a \t\tb") == Pieces{"a", " \t", "\t", "b"});
  CHECK(pretokens("x   \n\n y  ") == Pieces{"x", "   \n\n", " y", "  "});
  CHECK(pretokens("\r\n\r\n") == Pieces{"\r\n\r\n"});
  // U+3000 (ideographic space) and U+00A0 (no-break space) are white space.
  CHECK(pretokens("a\xE3\x80\x80"
                  "b\xC2\xA0 c") == Pieces{"a", "\xE3\x80\x80", "b", "\xC2\xA0", " c"});
}

TEST_CASE("GPT-2 pre-tokenization treats bytes that are not UTF-8 as punctuation") {
  CHECK(pretokens("a\xFF"
                  "b\xC3") == Pieces{"a", "\xFF", "b", "\xC3"});
  CHECK(pretokens("!\x80\xC0\xAF") == Pieces{"!\x80\xC0\xAF"});
}

TEST_CASE("BPE applies merges lowest rank first, leftmost among equals") {
  TempDir files;
  const TinyBpe ab_first{{{"a", "b"}, {"b", "c"}}};
  CHECK(BpeTokenizer(write_gpt2_files(files, ab_first)).encode("abc") ==
        std::vector<int32_t>{ab_first.id("ab"), 'c'});
  const TinyBpe bc_first{{{"b", "c"}, {"a", "b"}}};
  CHECK(BpeTokenizer(write_gpt2_files(files, bc_first)).encode("abc") ==
        std::vector<int32_t>{'a', bc_first.id("bc")});

  const TinyBpe doubling{{{"a", "a"}, {"aa", "aa"}}};
  const BpeTokenizer tok(write_gpt2_files(files, doubling));
  CHECK(tok.encode("aaa") == std::vector<int32_t>{doubling.id("aa"), 'a'});
  CHECK(tok.encode("aaaaa") == std::vector<int32_t>{doubling.id("aaaa"), 'a'});
}

TEST_CASE("BPE merges byte symbols within pre-tokens, never across them") {
  TempDir files;
  const TinyBpe bpe{{{" ", "t"}, {"h", "e"}, {" t", "he"}, {"\xC3", "\xA9"}, {"e", " "}}};
  const BpeTokenizer tok(write_gpt2_files(files, bpe));
  CHECK(tok.encode(" the the") == std::vector<int32_t>{bpe.id(" the"), bpe.id(" the")});
  CHECK(tok.encode("the") == std::vector<int32_t>{'t', bpe.id("he")});
  // "é" is two bytes whose symbols merge; "e " would merge but spans two pre-tokens.
  CHECK(tok.encode("caf\xC3\xA9 e ") ==
        std::vector<int32_t>{'c', 'a', 'f', bpe.id("\xC3\xA9"), ' ', 'e', ' '});
}

TEST_CASE("BPE encodes every byte by its byte-level symbol and decodes it back") {
  TempDir files;
  const BpeTokenizer tok(write_gpt2_files(files, TinyBpe{}));
  CHECK(tok.vocab_size() == 257);
  CHECK(tok.eot_token() == 256);
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  const std::vector<int32_t> tokens = tok.encode(all_bytes);
  std::vector<int32_t> byte_values(256);
  for (int b = 0; b < 256; ++b) byte_values[b] = b;
  CHECK(tokens == byte_values);  // the pre-tokenizer splits; no merges: one token per byte
  CHECK(tok.decode(tokens) == all_bytes);
  CHECK_THROWS_AS(tok.decode({257}), Error);
  CHECK_THROWS_AS(tok.decode({-1}), Error);
}

TEST_CASE("BPE turns the literal end-of-text text into its token and decodes it as a newline") {
  TempDir files;
  const TinyBpe bpe{{{"a", "b"}}};
  const BpeTokenizer tok(write_gpt2_files(files, bpe));
  const int32_t eot = bpe.id("<|endoftext|>");
  CHECK(tok.eot_token() == eot);
  CHECK(tok.encode("ab<|endoftext|><|endoftext|>b") ==
        std::vector<int32_t>{bpe.id("ab"), eot, eot, 'b'});
  CHECK(tok.encode("<|endoftext|") ==
        std::vector<int32_t>{'<', '|', 'e', 'n', 'd', 'o', 'f', 't', 'e', 'x', 't', '|'});
  CHECK(tok.decode({'a', eot, 'b'}) == "a\nb");
}

TEST_CASE("BPE reads tokenizer.json and vocab.json + merges.txt alike") {
  TempDir files;
  const TinyBpe bpe{{{" ", "t"}, {"h", "e"}, {" t", "he"}, {"\n", "\n"}}};
  const std::string text = "the theme\n\n\nof<|endoftext|> the  end";
  const std::vector<int32_t> expected = BpeTokenizer(write_gpt2_files(files, bpe)).encode(text);
  const int32_t the = bpe.id(" the"), eot = bpe.id("<|endoftext|>");
  CHECK(expected == std::vector<int32_t>{'t', bpe.id("he"), the, 'm', 'e', bpe.id("\n\n"), '\n',
                                         'o', 'f', eot, the, ' ', ' ', 'e', 'n', 'd'});

  const std::string vocab_path = files.file("vocab.json");
  CHECK(BpeTokenizer(vocab_path).encode(text) == expected);
  // Megatron's names, a merges file without "#version" and with CRLF line ends.
  files.write("gpt2-vocab.json", bpe.vocab().dump());
  std::string crlf_merges;
  for (const auto& [left, right] : bpe.merges)
    crlf_merges += symbols(left) + " " + symbols(right) + "\r\n";
  files.write("gpt2-merges.txt", crlf_merges);
  CHECK(BpeTokenizer(files.file("gpt2-vocab.json")).encode(text) == expected);

  for (bool merges_as_pairs : {true, false}) {
    const std::string json_path =
        files.write("tok.json", bpe.tokenizer_json(merges_as_pairs).dump());
    const BpeTokenizer tok(json_path);
    CHECK(tok.encode(text) == expected);
    CHECK(tok.vocab_size() == bpe.id("<|endoftext|>") + 1);
    CHECK(tok.name() == "bpe:" + json_path);
  }
  // A directory prefers tokenizer.json.
  files.write("tokenizer.json", bpe.tokenizer_json(true).dump());
  fs::remove(files.path() / "merges.txt");
  CHECK(BpeTokenizer(files.path().string()).encode(text) == expected);
}

TEST_CASE("BPE puts a space before each piece of text with ByteLevel's add_prefix_space") {
  TempDir files;
  const TinyBpe bpe{{{" ", "a"}}};
  Json json = bpe.tokenizer_json(true);
  Json pre_tokenizer = json.at("pre_tokenizer");
  pre_tokenizer.set("add_prefix_space", Json::boolean(true));
  json.set("pre_tokenizer", pre_tokenizer);
  const BpeTokenizer tok(files.write("tokenizer.json", json.dump()));
  const int32_t space_a = bpe.id(" a"), eot = bpe.id("<|endoftext|>");
  CHECK(tok.encode("a<|endoftext|>a a") == std::vector<int32_t>{space_a, eot, space_a, space_a});
  CHECK(tok.encode(" a") == std::vector<int32_t>{space_a});
  CHECK(tok.encode("").empty());
}

// `bpe`'s tokenizer.json as Llama 3's: Split(Llama 3's regex) then ByteLevel without its
// regex, and ignore_merges.
Json llama3_json(const TinyBpe& bpe) {
  Json json = bpe.tokenizer_json(true);
  const Json split =
      Json::object({{"type", Json::string("Split")},
                    {"pattern", Json::object({{"Regex", Json::string(kLlama3SplitPattern)}})},
                    {"behavior", Json::string("Isolated")},
                    {"invert", Json::boolean(false)}});
  const Json byte_level = Json::object({{"type", Json::string("ByteLevel")},
                                        {"add_prefix_space", Json::boolean(false)},
                                        {"trim_offsets", Json::boolean(true)},
                                        {"use_regex", Json::boolean(false)}});
  json.set("pre_tokenizer", Json::object({{"type", Json::string("Sequence")},
                                          {"pretokenizers", Json::array({split, byte_level})}}));
  Json model = json.at("model");
  model.set("ignore_merges", Json::boolean(true));
  json.set("model", model);
  return json;
}

TEST_CASE(
    "Llama 3 byte-level BPE splits by its regex, keeps vocabulary words whole and any bytes") {
  TempDir files;
  // "ab" is a token, but the merges make "a b" only after "b c": ignore_merges keeps it.
  const TinyBpe bpe{{{"b", "c"}, {"a", "b"}, {"'", "T"}}};
  const BpeTokenizer tok(files.write("tokenizer.json", llama3_json(bpe).dump()));
  CHECK(tok.encode("ab") == std::vector<int32_t>{bpe.id("ab")});
  CHECK(tok.encode("abc") == std::vector<int32_t>{'a', bpe.id("bc")});
  CHECK(tok.encode("DON'T") == std::vector<int32_t>{'D', 'O', 'N', bpe.id("'T")});
  // Bytes that are not UTF-8 encode as their byte symbols and decode back to themselves.
  const std::string invalid = "a\xFF\xC3(\x80 \xF0\x9F\x98";
  CHECK(tok.encode(invalid) ==
        std::vector<int32_t>{'a', 0xFF, 0xC3, '(', 0x80, ' ', 0xF0, 0x9F, 0x98});
  CHECK(tok.decode(tok.encode(invalid)) == invalid);
}

// The message of the llmft::Error that `load` throws ("" if it throws none).
std::string load_error(const std::function<void()>& load) {
  try {
    load();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// tokenizer.json of `bpe` with `key` (a top-level key, or "model.KEY") set to `value`.
Json tokenizer_json_with(const TinyBpe& bpe, const std::string& key, Json value) {
  Json json = bpe.tokenizer_json(true);
  if (key.rfind("model.", 0) == 0) {
    Json model = json.at("model");
    model.set(key.substr(6), std::move(value));
    json.set("model", model);
  } else {
    json.set(key, std::move(value));
  }
  return json;
}

TEST_CASE("BPE refuses malformed vocab.json and merges.txt, naming the file") {
  TempDir files;
  const TinyBpe bpe{{{"a", "b"}}};
  const std::string dir = files.path().string();
  const auto load_dir = [&] { BpeTokenizer tok(dir); };

  CHECK(load_error(load_dir).find("holds neither tokenizer.json nor vocab.json") !=
        std::string::npos);
  files.write("vocab.json", bpe.vocab().dump());
  std::string message = load_error(load_dir);
  CHECK(message.find("merges.txt") != std::string::npos);
  CHECK(message.find("cannot read") != std::string::npos);

  files.write("merges.txt", "#version: 0.2\na b\nq z\n");
  message = load_error(load_dir);
  CHECK(message.find("merges.txt line 3") != std::string::npos);
  CHECK(message.find("\"qz\" is not in the vocabulary") != std::string::npos);
  files.write("merges.txt", "a b\nx y\n");
  message = load_error(load_dir);
  CHECK(message.find("line 2") != std::string::npos);
  CHECK(message.find("the merged symbol \"xy\"") != std::string::npos);
  files.write("merges.txt", "a b c\n");
  CHECK(load_error(load_dir).find("line 1: expected two symbols separated by one space") !=
        std::string::npos);
  files.write("merges.txt", bpe.merges_txt());
  CHECK(load_error(load_dir).empty());

  files.write("vocab.json", "{\"a\": 0,");
  message = load_error(load_dir);
  CHECK(message.find("vocab.json") != std::string::npos);
  CHECK(message.find("invalid JSON") != std::string::npos);

  Json vocab = bpe.vocab();
  vocab.set("b", Json::number(-3));
  files.write("vocab.json", vocab.dump());
  CHECK(load_error(load_dir).find("ids must be integers") != std::string::npos);
  vocab.set("b", Json::number(1e9));
  files.write("vocab.json", vocab.dump());
  CHECK(load_error(load_dir).find("id 1000000000 is beyond the 259 tokens") != std::string::npos);
  vocab.set("b", Json::number('a'));
  files.write("vocab.json", vocab.dump());
  CHECK(load_error(load_dir).find("id 97 is given to more than one token") != std::string::npos);

  const Json full_vocab = bpe.vocab();
  vocab = Json::object({});
  for (const auto& [text, id] : full_vocab.as_object()) {
    if (text != "<|endoftext|>") vocab.set(text, id);
  }
  files.write("vocab.json", vocab.dump());
  message = load_error(load_dir);
  CHECK(message.find("vocab.json") != std::string::npos);
  CHECK(message.find("no end-of-text token") != std::string::npos);

  vocab = Json::object({});
  for (const auto& [text, id] : full_vocab.as_object()) {
    if (text != byte_symbol(' ')) vocab.set(text, id);
  }
  files.write("vocab.json", vocab.dump());
  CHECK(load_error(load_dir).find("the symbol of byte 32") != std::string::npos);
}

TEST_CASE("BPE refuses tokenizer.json files it cannot tokenize as Hugging Face does") {
  TempDir files;
  const TinyBpe bpe{{{"a", "b"}}};
  const auto message_for = [&](const Json& json) {
    const std::string path = files.write("tokenizer.json", json.dump());
    const std::string message = load_error([&] { BpeTokenizer tok(path); });
    CHECK(message.find(path) != std::string::npos);
    return message;
  };
  const Json nfc = Json::object({{"type", Json::string("NFC")}});
  CHECK(message_for(tokenizer_json_with(bpe, "normalizer", nfc))
            .find("normalizer NFC is not supported") != std::string::npos);
  const Json whitespace = Json::object({{"type", Json::string("Whitespace")}});
  CHECK(message_for(tokenizer_json_with(bpe, "pre_tokenizer", whitespace))
            .find("pre_tokenizer Whitespace is not supported") != std::string::npos);
  CHECK(message_for(tokenizer_json_with(bpe, "model.type", Json::string("WordPiece")))
            .find("model.type is \"WordPiece\"") != std::string::npos);
  CHECK(message_for(tokenizer_json_with(bpe, "model.dropout", Json::number(0.1)))
            .find("model.dropout is 0.1, which is not supported") != std::string::npos);
  CHECK(message_for(tokenizer_json_with(bpe, "model.byte_fallback", Json::boolean(true)))
            .find("model.byte_fallback") != std::string::npos);
  CHECK(message_for(tokenizer_json_with(bpe, "model.type", Json::string("Unigram")))
            .find("model.type is \"Unigram\"") != std::string::npos);
  const Json wordpiece_decoder = Json::object({{"type", Json::string("WordPiece")}});
  CHECK(message_for(tokenizer_json_with(bpe, "decoder", wordpiece_decoder))
            .find("decoder WordPiece is not supported") != std::string::npos);
  const Json bert_processing = Json::object({{"type", Json::string("BertProcessing")}});
  CHECK(message_for(tokenizer_json_with(bpe, "post_processor", bert_processing))
            .find("post_processor BertProcessing is not supported") != std::string::npos);
  CHECK(message_for(tokenizer_json_with(bpe, "model.merges", Json::array({Json::string("ab")})))
            .find("model.merges[0]") != std::string::npos);
  const Json unknown_merge = Json::array({Json::array({Json::string("a"), Json::string("q")})});
  CHECK(message_for(tokenizer_json_with(bpe, "model.merges", unknown_merge))
            .find("model.merges[0] (\"a q\"): the merged symbol \"aq\" is not in the vocabulary") !=
        std::string::npos);
  Json lstrip_token = bpe.tokenizer_json(true).at("added_tokens").as_array()[0];
  lstrip_token.set("lstrip", Json::boolean(true));
  CHECK(message_for(tokenizer_json_with(bpe, "added_tokens", Json::array({lstrip_token})))
            .find("sets lstrip, which is not supported") != std::string::npos);
  CHECK(message_for(Json::object({{"model", Json::string("BPE")}}))
            .find("has no \"model\" object, which holds a tokenizer.json's vocabulary and "
                  "merges; its \"model\" is a JSON string") != std::string::npos);
}

TEST_CASE("a tokenizer.json without its model, or of another model type, is named as such") {
  TempDir files;
  const auto message_for = [&](const std::string& text) {
    const std::string path = files.write("tokenizer.json", text);
    return load_error([&] { BpeTokenizer tok(path); });
  };
  // Was read as a vocab.json: 'token "version" has id "1.0"'.
  const std::string no_model =
      message_for(R"({"version": "1.0", "truncation": null, "added_tokens": []})");
  CHECK(no_model.find("tokenizer.json has no \"model\" object, which holds a tokenizer.json's "
                      "vocabulary and merges") != std::string::npos);
  CHECK(no_model.find("; its") == std::string::npos);
  // Their own pre-tokenizers were the part refused: "pre_tokenizer (none)".
  const std::string unigram = message_for(
      R"({"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]},
          "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "split": true}})");
  CHECK(unigram.find("model.type is \"Unigram\", not \"BPE\": llmft reads BPE models only") !=
        std::string::npos);
  CHECK(message_for(R"({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}})")
            .find("model.type is \"Unigram\"") != std::string::npos);
  CHECK(message_for(R"({"model": {"type": "WordPiece", "vocab": {"a": 0}},
                        "pre_tokenizer": {"type": "BertPreTokenizer"}})")
            .find("model.type is \"WordPiece\", not \"BPE\"") != std::string::npos);
}

TEST_CASE("make_tokenizer builds a BPE from bpe:PATH or a plain path") {
  TempDir files;
  const std::string dir = write_gpt2_files(files, TinyBpe{{{"a", "b"}}});
  const std::string json_path =
      files.write("tok.json", TinyBpe{{{"a", "b"}}}.tokenizer_json(true).dump());
  CHECK(make_tokenizer("bpe:" + dir)->name() == "bpe:" + dir);
  CHECK(make_tokenizer(dir)->encode("ab") == std::vector<int32_t>{256});
  CHECK(make_tokenizer(json_path)->encode("ab") == std::vector<int32_t>{256});
  const fs::path working_dir = fs::current_path();
  fs::current_path(files.path());
  CHECK(make_tokenizer("tok.json")->vocab_size() == 258);
  // A directory named without a '/' (`--tokenizer model_dir`) is a path too.
  fs::current_path(files.path().parent_path());
  CHECK(make_tokenizer(files.path().filename().string())->encode("ab") ==
        std::vector<int32_t>{256});
  fs::current_path(working_dir);

  CHECK(load_error([] { make_tokenizer("bpe"); }).find("write 'bpe:PATH'") != std::string::npos);
  const std::string unknown = load_error([] { make_tokenizer("sentencepiece"); });
  CHECK(unknown.find("'byte', 'bpe:PATH'") != std::string::npos);
  CHECK(load_error([&] { make_tokenizer(dir + "/absent.json"); }).find("absent.json") !=
        std::string::npos);
}

}  // namespace
}  // namespace llmft::io
