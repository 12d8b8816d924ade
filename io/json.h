// Json: a small JSON value (null, bool, number, string, array, object) with a strict
// RFC 8259 parser (built on nlohmann-json's SAX parser, json_parse.cpp) and a compact
// writer. Used for HF config.json, JSONL datasets, safetensors headers and metrics lines.
//
// Objects keep their members in insertion order (a vector of pairs, looked up
// linearly), so files written from a Json read back in the same order. Numbers are
// doubles: integers are exact up to 2^53.
//
// Thread-safety: a const Json may be read from many threads; mutation needs external
// synchronization.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace llmft::io {

class Json {
 public:
  enum class Kind { null, boolean, number, string, array, object };
  using Object = std::vector<std::pair<std::string, Json>>;  // keeps key order
  using Array = std::vector<Json>;

  Json();  // null
  static Json boolean(bool b);
  static Json number(double v);
  static Json string(std::string s);
  static Json array(Array items);
  static Json object(Object members);

  // Parses one JSON document of UTF-8 text: \uXXXX escapes (surrogate pairs included)
  // become UTF-8, numbers follow the RFC grammar, nesting is limited to 512 levels, and an
  // object may not repeat a key. Anything but whitespace after the value is an error, and
  // so are bytes that are not UTF-8, a leading UTF-8 byte-order mark (as in Python's json
  // and serde_json) and a number beyond a double's range (named with its key); one too
  // small becomes 0, and "-0" becomes 0 (an integer, as in Python's json).
  // Throws llmft::Error "invalid JSON at offset N: <what was wrong>", N the byte offset of
  // the token the grammar does not allow there (a misspelt literal included), or of the byte
  // where a string or number breaks off.
  static Json parse(std::string_view text);

  // "null", "boolean", "number", "string", "array" or "object".
  static const char* kind_name(Kind kind);

  Kind kind() const;
  bool is_null() const { return kind() == Kind::null; }
  bool is_bool() const { return kind() == Kind::boolean; }
  bool is_number() const { return kind() == Kind::number; }
  bool is_string() const { return kind() == Kind::string; }
  bool is_array() const { return kind() == Kind::array; }
  bool is_object() const { return kind() == Kind::object; }

  // Each as_* throws llmft::Error naming the expected and the actual kind.
  bool as_bool() const;
  double as_number() const;
  int64_t as_int() const;  // also throws if the number is not an integer in int64 range
  const std::string& as_string() const;
  const Array& as_array() const;
  const Object& as_object() const;

  // The member named `key`; nullptr if absent or if this is not an object.
  const Json* find(std::string_view key) const;
  // The member named `key`; throws llmft::Error "missing key \"key\"" if absent.
  const Json& at(std::string_view key) const;

  // Replaces the member named `key`, or appends it.
  // REQUIRES: is_object()
  void set(std::string key, Json value);
  // REQUIRES: is_array()
  void push_back(Json value);

  // Compact text. Integral numbers with |v| < 2^53 print without a fraction, other
  // numbers as the shortest text that reads back to the same double; NaN and
  // infinities print as null.
  std::string dump() const;

  // `s` as a JSON string literal, quotes included; bytes >= 0x80 pass through (parse reads
  // them back if they are UTF-8).
  static std::string quote(std::string_view s);

 private:
  void dump_to(std::string& out) const;

  std::variant<std::monostate, bool, double, std::string, Array, Object> value_;
};

}  // namespace llmft::io
