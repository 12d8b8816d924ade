// Json::parse: JSON text read by nlohmann-json's SAX parser straight into a Json (no
// nlohmann::json tree in between). nlohmann checks the RFC 8259 grammar, escapes, surrogate
// pairs and UTF-8; the builder here adds what it leaves to its caller (nesting depth,
// repeated keys, a leading byte-order mark, which nlohmann skips) and turns each error
// into "invalid JSON at offset N: ...", N a byte offset into the text.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/json.h"

namespace llmft::io {

namespace {

constexpr size_t kMaxDepth = 512;
constexpr int kNumberOverflowId = 406;  // nlohmann's out_of_range error for a number too large

[[noreturn]] void fail_at(size_t offset, std::string_view what) {
  LLMFT_FAIL("invalid JSON at offset " << offset << ": " << what);
}

// An input iterator over the text whose copies share one read position: nlohmann's lexer
// reads through a copy, and the builder asks the original how far it has read, since
// nlohmann's SAX events carry no offsets.
class SharedCursor {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;

  explicit SharedCursor(const char** at) : at_(at) {}

  char operator*() const { return **at_; }
  SharedCursor& operator++() {
    ++*at_;
    return *this;
  }
  bool operator==(const SharedCursor& other) const { return *at_ == *other.at_; }
  bool operator!=(const SharedCursor& other) const { return *at_ != *other.at_; }

 private:
  const char** at_;
};

// "the number 1e400 of key "n_layer" is out of range: ...", the number cut at 40 bytes.
std::string out_of_range(std::string_view number, std::string_view key) {
  constexpr size_t kShown = 40;
  std::string text = "the number " + std::string(number.substr(0, kShown));
  if (number.size() > kShown) text += "...";
  if (!key.empty()) text += " of key " + Json::quote(key);
  return text + " is out of range: a double holds magnitudes up to about 1.8e308";
}

// What nlohmann's parse_error says was wrong, from its what(): "[json.exception.parse_error.101]
// parse error at line 1, column 5: " then the reason.
std::string nlohmann_reason(const std::string& what) {
  const size_t colon = what.find(": ");
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  // After an element nlohmann names only the closing bracket; a comma is as good.
  for (const std::string closing : {"']'", "'}'"}) {
    const std::string expected = "; expected " + closing;
    if (reason.size() >= expected.size() &&
        reason.compare(reason.size() - expected.size(), expected.size(), expected) == 0) {
      reason.insert(reason.size() - closing.size(), "',' or ");
    }
  }
  return reason;
}

// The SAX handler nlohmann's parser calls: builds the Json, and throws llmft::Error for
// every error, its own and nlohmann's.
class JsonBuilder {
 public:
  // `read_to`: how far the lexer has read `text` (a SharedCursor's position).
  JsonBuilder(std::string_view text, const char* const* read_to) : text_(text), read_to_(read_to) {}

  Json take_result() { return std::move(root_); }

  bool null() { return add(Json()); }
  bool boolean(bool b) { return add(Json::boolean(b)); }
  bool number_integer(std::int64_t v) { return add(Json::number(static_cast<double>(v))); }
  bool number_unsigned(std::uint64_t v) { return add(Json::number(static_cast<double>(v))); }
  bool number_float(double v, const std::string& /*text*/) { return add(Json::number(v)); }
  bool string(std::string& s) { return add(Json::string(std::move(s))); }
  // Binary values come from CBOR and the like only; nlohmann's SAX interface requires the
  // method, and JSON text never calls it.
  bool binary(nlohmann::json::binary_t& /*bytes*/) {
    LLMFT_FAIL("invalid JSON: nlohmann-json reported a binary value, which JSON text cannot hold");
  }

  bool start_object(std::size_t /*unknown*/) { return open(true); }
  bool key(std::string& k) {
    open_.back().key = std::move(k);
    return true;
  }
  bool end_object() {
    require_unique_keys(open_.back());
    return close();
  }
  bool start_array(std::size_t /*unknown*/) { return open(false); }
  bool end_array() { return close(); }

  // `position`: the bytes nlohmann's lexer has read, the end of input counting as one;
  // `last_token`: what it read for the token it stopped at.
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::json::exception& error) {
    if (error.id == kNumberOverflowId) {
      fail_at(position - last_token.size(), out_of_range(last_token, naming_key()));
    }
    std::string reason = nlohmann_reason(error.what());
    // A token the lexer could not finish adds what it read of it, which can be the rest of a
    // long document: dropped, as the offset points at the byte it could not take.
    const std::string last_read = "; last read: '" + last_token + "'";
    const size_t at = reason.find(last_read);
    if (at == std::string::npos) fail_at(unexpected_token_offset(position, last_token), reason);
    reason.erase(at, last_read.size());
    // Inside a string or a number the byte the lexer could not take is the one to fix; a
    // misspelt literal is wrong as a whole ("not json" at offset 0, as before nlohmann).
    const size_t stop = position - 1;
    fail_at(reason.find("invalid literal") != std::string::npos ? literal_start(stop) : stop,
            reason);
  }

 private:
  // An array or object being read.
  struct OpenContainer {
    bool is_object;
    size_t offset;    // of its '[' or '{'
    std::string key;  // an object's member being read, or the key an array is the value of
    Json::Array items;
    Json::Object members;
  };

  // The key a number error names: of the innermost object member the number lies in.
  std::string_view naming_key() const {
    if (open_.empty()) return {};
    return open_.back().key;
  }

  // The first byte of the whole token the parser did not expect, which ends just before
  // `position`. The lexer restarts its token text (`last_token`) at a string or a number
  // only, so literals and punctuation are measured by their spelling.
  size_t unexpected_token_offset(size_t position, const std::string& last_token) const {
    if (position > text_.size()) return text_.size();  // the end of input
    const char last = text_[position - 1];
    if (last == '"' || (last >= '0' && last <= '9')) return position - last_token.size();
    for (std::string_view literal : {"true", "false", "null"}) {
      if (position >= literal.size() &&
          text_.substr(position - literal.size(), literal.size()) == literal) {
        return position - literal.size();
      }
    }
    return position - 1;  // one of [ ] { } : ,
  }

  // Where the literal the lexer gave up on at `stop` began: the lexer reads true, false and
  // null letter by letter and keeps no start. At most one proper prefix of a literal can
  // end just before `stop` (no letter of one starts another); none: `stop` began it.
  size_t literal_start(size_t stop) const {
    for (std::string_view literal : {"true", "false", "null"}) {
      for (size_t length = 1; length < literal.size() && length <= stop; ++length) {
        if (text_.substr(stop - length, length) == literal.substr(0, length)) {
          return stop - length;
        }
      }
    }
    return stop;
  }

  bool add(Json value) {
    if (open_.empty()) {
      root_ = std::move(value);
    } else if (open_.back().is_object) {
      open_.back().members.emplace_back(std::move(open_.back().key), std::move(value));
    } else {
      open_.back().items.push_back(std::move(value));
    }
    return true;
  }

  bool open(bool is_object) {
    // The lexer has read just up to and including the '[' or '{'.
    const size_t offset = static_cast<size_t>(*read_to_ - text_.data()) - 1;
    if (open_.size() == kMaxDepth) {
      fail_at(offset, "nesting deeper than " + std::to_string(kMaxDepth) + " arrays/objects");
    }
    open_.push_back(OpenContainer{is_object, offset, std::string(naming_key()), {}, {}});
    return true;
  }

  bool close() {
    OpenContainer done = std::move(open_.back());
    open_.pop_back();
    if (done.is_object) return add(Json::object(std::move(done.members)));
    return add(Json::array(std::move(done.items)));
  }

  // Sorting views keeps this O(n log n) for large objects such as vocab.json.
  static void require_unique_keys(const OpenContainer& object) {
    if (object.members.size() < 2) return;
    std::vector<std::string_view> keys;
    keys.reserve(object.members.size());
    for (const auto& [key, value] : object.members) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    const auto duplicate = std::adjacent_find(keys.begin(), keys.end());
    if (duplicate != keys.end()) {
      fail_at(object.offset, "object repeats key " + Json::quote(*duplicate));
    }
  }

  std::string_view text_;
  const char* const* read_to_;
  std::vector<OpenContainer> open_;
  Json root_;
};

}  // namespace

Json Json::parse(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") {
    fail_at(0,
            "the text starts with a UTF-8 byte-order mark (bytes EF BB BF), which JSON does not "
            "allow; save the file as UTF-8 without a BOM, or delete its first three bytes");
  }
  const char* read_to = text.data();
  const char* end = text.data() + text.size();
  JsonBuilder builder(text, &read_to);
  // Every error throws from the builder, so a parse that returns has succeeded.
  nlohmann::json::sax_parse(SharedCursor(&read_to), SharedCursor(&end), &builder);
  return builder.take_result();
}

}  // namespace llmft::io
