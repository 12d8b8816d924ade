#include "io/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace llmft::io {

namespace {

constexpr int kMaxDepth = 512;
constexpr double kTwoTo53 = 9007199254740992.0;
constexpr double kTwoTo63 = 9223372036854775808.0;

// Recursive-descent parser over one document; `pos_` is the byte offset reported
// in errors.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Json parse_document() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") {
      fail(
          "the text starts with a UTF-8 byte-order mark (bytes EF BB BF), which JSON does not "
          "allow; save the file as UTF-8 without a BOM, or delete its first three bytes");
    }
    Json value = parse_value(0, "");
    skip_whitespace();
    if (pos_ != text_.size()) fail("expected end of input after the JSON value");
    return value;
  }

 private:
  [[noreturn]] void fail(std::string_view expected) const { fail_at(pos_, expected); }
  [[noreturn]] static void fail_at(size_t offset, std::string_view expected) {
    LLMFT_FAIL("invalid JSON at offset " << offset << ": " << expected);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_whitespace() {
    while (!at_end()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  void expect_literal(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) {
      fail("expected a value (null, true, false, number, string, array or object)");
    }
    pos_ += literal.size();
  }

  // `key`: the object member the value belongs to (directly or inside its arrays), named
  // in errors; empty at the top level.
  Json parse_value(int depth, std::string_view key) {
    skip_whitespace();
    switch (peek()) {
      case 'n':
        expect_literal("null");
        return Json();
      case 't':
        expect_literal("true");
        return Json::boolean(true);
      case 'f':
        expect_literal("false");
        return Json::boolean(false);
      case '"':
        return Json::string(parse_string());
      case '[':
        return parse_array(depth + 1, key);
      case '{':
        return parse_object(depth + 1);
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number(key);
        if (at_end()) fail("expected a value, found end of input");
        fail("expected a value (null, true, false, number, string, array or object)");
    }
  }

  void check_depth(int depth) const {
    if (depth > kMaxDepth) {
      fail("nesting deeper than " + std::to_string(kMaxDepth) + " arrays/objects");
    }
  }

  Json parse_array(int depth, std::string_view key) {
    check_depth(depth);
    ++pos_;  // '['
    Json::Array items;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return Json::array(std::move(items));
    }
    while (true) {
      items.push_back(parse_value(depth, key));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() == ']') {
        ++pos_;
        return Json::array(std::move(items));
      } else {
        fail("expected ',' or ']' in array");
      }
    }
  }

  Json parse_object(int depth) {
    check_depth(depth);
    size_t start = pos_;
    ++pos_;  // '{'
    Json::Object members;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return Json::object(std::move(members));
    }
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected '\"' to start an object key");
      std::string key = parse_string();
      skip_whitespace();
      if (peek() != ':') fail("expected ':' after object key");
      ++pos_;
      Json value = parse_value(depth, key);
      members.emplace_back(std::move(key), std::move(value));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() == '}') {
        ++pos_;
        break;
      } else {
        fail("expected ',' or '}' in object");
      }
    }
    check_unique_keys(members, start);
    return Json::object(std::move(members));
  }

  // Sorting views keeps this O(n log n) for large objects such as vocab.json.
  static void check_unique_keys(const Json::Object& members, size_t object_offset) {
    if (members.size() < 2) return;
    std::vector<std::string_view> keys;
    keys.reserve(members.size());
    for (const auto& [key, value] : members) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    auto duplicate = std::adjacent_find(keys.begin(), keys.end());
    if (duplicate != keys.end()) {
      fail_at(object_offset, "object repeats key " + Json::quote(*duplicate));
    }
  }

  Json parse_number(std::string_view key) {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (peek() >= '1' && peek() <= '9') {
      skip_digits();
    } else {
      fail("expected a digit in number");
    }
    if (peek() == '.') {
      ++pos_;
      if (!is_digit(peek())) fail("expected a digit after '.' in number");
      skip_digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) fail("expected a digit in number exponent");
      skip_digits();
    }
    double value = 0;
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    auto [end, error] = std::from_chars(first, last, value);
    if (error == std::errc::result_out_of_range) {
      // Underflow becomes 0 (or the nearest subnormal), as in other JSON readers; overflow
      // is refused, as serde_json (Hugging Face tokenizers) does, rather than read as
      // infinity, which no JSON text can mean.
      value = std::strtod(std::string(first, last).c_str(), nullptr);
      if (std::isinf(value))
        fail_at(start, out_of_range(std::string_view(first, last - first), key));
    } else if (error != std::errc() || end != last) {
      fail_at(start, "malformed number");
    }
    return Json::number(value);
  }

  static std::string out_of_range(std::string_view number, std::string_view key) {
    constexpr size_t kShown = 40;
    std::string text = "the number " + std::string(number.substr(0, kShown));
    if (number.size() > kShown) text += "...";
    if (!key.empty()) text += " of key " + Json::quote(key);
    return text + " is out of range: a double holds magnitudes up to about 1.8e308";
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  void skip_digits() {
    while (is_digit(peek())) ++pos_;
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (at_end()) fail("expected '\"' to end the string, found end of input");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("control character in string (escape it, e.g. \\n or \\u0001)");
      }
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("expected an escape character after '\\'");
      char escape = text_[pos_++];
      switch (escape) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u':
          append_utf8(out, parse_code_point());
          break;
        default:
          --pos_;
          fail("expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
      }
    }
  }

  // After "\u": reads XXXX, and for a high surrogate the "\uXXXX" low half too.
  uint32_t parse_code_point() {
    size_t start = pos_ - 2;
    uint32_t unit = parse_hex4();
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      fail_at(start, "unpaired low surrogate \\u" + hex(unit));
    }
    if (unit < 0xD800 || unit > 0xDBFF) return unit;
    if (text_.substr(pos_, 2) != "\\u") {
      fail_at(start, "high surrogate \\u" + hex(unit) + " must be followed by a \\uDC00-\\uDFFF");
    }
    pos_ += 2;
    uint32_t low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) {
      fail_at(start, "high surrogate \\u" + hex(unit) + " must be followed by a \\uDC00-\\uDFFF");
    }
    return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }

  uint32_t parse_hex4() {
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      uint32_t digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        fail("expected 4 hex digits after \\u");
      }
      value = value * 16 + digit;
      ++pos_;
    }
    return value;
  }

  static std::string hex(uint32_t unit) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "%04X", static_cast<unsigned>(unit));
    return buffer;
  }

  static void append_utf8(std::string& out, uint32_t code_point) {
    if (code_point < 0x80) {
      out.push_back(static_cast<char>(code_point));
    } else if (code_point < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
      out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    } else if (code_point < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
      out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
      out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buffer[32];
  char* end;
  if (v == std::trunc(v) && std::fabs(v) < kTwoTo53) {
    end = std::to_chars(buffer, buffer + sizeof buffer, static_cast<int64_t>(v)).ptr;
  } else {
    end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;  // shortest round-trip
  }
  out.append(buffer, end);
}

}  // namespace

Json::Json() = default;

Json Json::boolean(bool b) {
  Json json;
  json.value_ = b;
  return json;
}

Json Json::number(double v) {
  Json json;
  json.value_ = v;
  return json;
}

Json Json::string(std::string s) {
  Json json;
  json.value_ = std::move(s);
  return json;
}

Json Json::array(Array items) {
  Json json;
  json.value_ = std::move(items);
  return json;
}

Json Json::object(Object members) {
  Json json;
  json.value_ = std::move(members);
  return json;
}

Json Json::parse(std::string_view text) {
  return Parser(text).parse_document();
}

const char* Json::kind_name(Kind kind) {
  switch (kind) {
    case Kind::null:
      return "null";
    case Kind::boolean:
      return "boolean";
    case Kind::number:
      return "number";
    case Kind::string:
      return "string";
    case Kind::array:
      return "array";
    case Kind::object:
      return "object";
  }
  return "unknown";
}

Json::Kind Json::kind() const {
  return static_cast<Kind>(value_.index());
}

namespace {

template <typename T, typename Variant>
const T& get_as(const Variant& value, Json::Kind expected) {
  if (const T* p = std::get_if<T>(&value)) return *p;
  LLMFT_FAIL("expected JSON " << Json::kind_name(expected) << ", got "
                              << Json::kind_name(static_cast<Json::Kind>(value.index())));
}

}  // namespace

bool Json::as_bool() const {
  return get_as<bool>(value_, Kind::boolean);
}
double Json::as_number() const {
  return get_as<double>(value_, Kind::number);
}
const std::string& Json::as_string() const {
  return get_as<std::string>(value_, Kind::string);
}
const Json::Array& Json::as_array() const {
  return get_as<Array>(value_, Kind::array);
}
const Json::Object& Json::as_object() const {
  return get_as<Object>(value_, Kind::object);
}

int64_t Json::as_int() const {
  double v = as_number();
  LLMFT_REQUIRE(v == std::trunc(v) && v >= -kTwoTo63 && v < kTwoTo63,
                "expected an integer, got " << dump());
  return static_cast<int64_t>(v);
}

const Json* Json::find(std::string_view key) const {
  const Object* members = std::get_if<Object>(&value_);
  if (members == nullptr) return nullptr;
  for (const auto& [name, value] : *members) {
    if (name == key) return &value;
  }
  return nullptr;
}

const Json& Json::at(std::string_view key) const {
  const Json* value = find(key);
  if (value == nullptr) {
    LLMFT_REQUIRE(is_object(), "cannot look up key " << quote(key) << ": expected JSON object, got "
                                                     << kind_name(kind()));
    LLMFT_FAIL("missing key " << quote(key));
  }
  return *value;
}

void Json::set(std::string key, Json value) {
  Object* members = std::get_if<Object>(&value_);
  LLMFT_REQUIRE(members != nullptr, "cannot set key " << quote(key)
                                                      << ": expected JSON object, got "
                                                      << kind_name(kind()));
  for (auto& [name, existing] : *members) {
    if (name == key) {
      existing = std::move(value);
      return;
    }
  }
  members->emplace_back(std::move(key), std::move(value));
}

void Json::push_back(Json value) {
  Array* items = std::get_if<Array>(&value_);
  LLMFT_REQUIRE(items != nullptr,
                "cannot push_back: expected JSON array, got " << kind_name(kind()));
  items->push_back(std::move(value));
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

void Json::dump_to(std::string& out) const {
  switch (kind()) {
    case Kind::null:
      out += "null";
      break;
    case Kind::boolean:
      out += std::get<bool>(value_) ? "true" : "false";
      break;
    case Kind::number:
      append_number(out, std::get<double>(value_));
      break;
    case Kind::string:
      out += quote(std::get<std::string>(value_));
      break;
    case Kind::array: {
      out.push_back('[');
      bool first = true;
      for (const Json& item : std::get<Array>(value_)) {
        if (!first) out.push_back(',');
        first = false;
        item.dump_to(out);
      }
      out.push_back(']');
      break;
    }
    case Kind::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, value] : std::get<Object>(value_)) {
        if (!first) out.push_back(',');
        first = false;
        out += quote(key);
        out.push_back(':');
        value.dump_to(out);
      }
      out.push_back('}');
      break;
    }
  }
}

std::string Json::quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xF]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace llmft::io
