// Json's value, accessors and writer; Json::parse is in json_parse.cpp.
#include "io/json.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace llmft::io {

namespace {

constexpr double kTwoTo53 = 9007199254740992.0;
constexpr double kTwoTo63 = 9223372036854775808.0;

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
