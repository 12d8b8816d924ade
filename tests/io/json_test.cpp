#include "io/json.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/error.h"

using llmft::Error;
using llmft::io::Json;

namespace {

// The message of the llmft::Error that parsing `text` throws.
std::string parse_error(std::string_view text) {
  try {
    Json::parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("expected Json::parse to throw for: " << std::string(text));
  return "";
}

}  // namespace

TEST_CASE("Json parses an HF-style config") {
  Json config = Json::parse(R"( {
    "model_type": "llama", "hidden_size": 4096, "rms_norm_eps": 1e-06,
    "tie_word_embeddings": false, "rope_scaling": null,
    "architectures": ["LlamaForCausalLM"], "nested": {"a": [1, [2, {}]], "b": -0.5E+2}
  } )");
  CHECK(config.is_object());
  CHECK(config.at("model_type").as_string() == "llama");
  CHECK(config.at("hidden_size").as_int() == 4096);
  CHECK(config.at("rms_norm_eps").as_number() == 1e-6);  // both correctly rounded
  CHECK_FALSE(config.at("tie_word_embeddings").as_bool());
  CHECK(config.at("rope_scaling").is_null());
  CHECK(config.at("architectures").as_array().at(0).as_string() == "LlamaForCausalLM");
  CHECK(config.at("nested").at("b").as_number() == -50.0);
  CHECK(config.find("absent") == nullptr);

  const Json::Object& members = config.as_object();
  REQUIRE(members.size() == 7);
  CHECK(members[0].first == "model_type");
  CHECK(members[6].first == "nested");
}

TEST_CASE("Json parses scalars at top level") {
  CHECK(Json::parse("null").is_null());
  CHECK(Json::parse(" true ").as_bool());
  CHECK(Json::parse("0").as_int() == 0);
  CHECK(Json::parse("-12").as_int() == -12);
  CHECK(Json::parse("3.25").as_number() == 3.25);
  CHECK(Json::parse("1E3").as_number() == 1000.0);
  CHECK(Json::parse("2e-3").as_number() == 0.002);
  CHECK(Json::parse("\"x\"").as_string() == "x");
  CHECK(Json::parse("1e-400").as_number() == 0.0);  // underflow rounds to zero
}

TEST_CASE("Json refuses a number beyond a double, naming its key (it read as null)") {
  CHECK(parse_error("1e400") ==
        "invalid JSON at offset 0: the number 1e400 is out of range: a double holds "
        "magnitudes up to about 1.8e308");
  CHECK(parse_error(R"({"n_embd": 8, "n_layer": -1E400})")
            .find("offset 25: the number -1E400 of key \"n_layer\" is out of range") !=
        std::string::npos);
  CHECK(parse_error(R"({"eos_token_id": [1, 2e999]})").find("2e999 of key \"eos_token_id\"") !=
        std::string::npos);
  // A key that an earlier, nested object named is not this number's.
  CHECK(parse_error(R"([{"a": 1}, 1e999])").find("1e999 is out of range") != std::string::npos);
  const std::string digits(400, '9');
  CHECK(parse_error(digits).find("the number " + std::string(40, '9') + "... is out of range") !=
        std::string::npos);
  CHECK(Json::parse("1.7976931348623157e308").as_number() == std::numeric_limits<double>::max());
}

TEST_CASE("Json refuses a UTF-8 byte-order mark, saying so (it said \"offset 0\" only)") {
  CHECK(parse_error("\xEF\xBB\xBF{\"a\": 1}") ==
        "invalid JSON at offset 0: the text starts with a UTF-8 byte-order mark (bytes EF BB "
        "BF), which JSON does not allow; save the file as UTF-8 without a BOM, or delete its "
        "first three bytes");
  CHECK(Json::parse("\"\xEF\xBB\xBF\"").as_string() == "\xEF\xBB\xBF");  // inside a string: text
}

TEST_CASE("Json string escapes decode to UTF-8") {
  CHECK(Json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(Json::parse(R"("\u0041\u00e9\u20AC")").as_string() == "A\xC3\xA9\xE2\x82\xAC");
  // U+1F600 as a surrogate pair.
  CHECK(Json::parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");
  // Raw UTF-8 passes through.
  CHECK(Json::parse("\"\xC4\xA0the\"").as_string() == "\xC4\xA0the");
}

TEST_CASE("Json::parse reports the byte offset and what was wrong") {
  // A whole token the grammar does not allow there: the offset is its first byte.
  CHECK(parse_error("") ==
        "invalid JSON at offset 0: syntax error while parsing value - unexpected end of input; "
        "expected '[', '{', or a literal");
  CHECK(parse_error("[1, 2") ==
        "invalid JSON at offset 5: syntax error while parsing array - unexpected end of input; "
        "expected ',' or ']'");
  CHECK(parse_error("{\"a\": 1 \"b\": 2}") ==
        "invalid JSON at offset 8: syntax error while parsing object - unexpected string literal; "
        "expected ',' or '}'");
  CHECK(parse_error("{\"a\" 123}") ==
        "invalid JSON at offset 5: syntax error while parsing object separator - unexpected "
        "number literal; expected ':'");
  CHECK(parse_error("{\"a\":1,}") ==
        "invalid JSON at offset 7: syntax error while parsing object key - unexpected '}'; "
        "expected string literal");
  CHECK(parse_error("[1] [2]") ==
        "invalid JSON at offset 4: syntax error while parsing value - unexpected '['; expected "
        "end of input");
  // A token the lexer cannot finish: the offset is the byte it stopped at.
  CHECK(parse_error("[1] x") ==
        "invalid JSON at offset 4: syntax error while parsing value - invalid literal; expected "
        "end of input");
  CHECK(parse_error("\"a\nb\"") ==
        "invalid JSON at offset 2: syntax error while parsing value - invalid string: control "
        "character U+000A (LF) must be escaped to \\u000A or \\n");
  // ... except a misspelt literal, wrong as a whole: the offset is its first byte.
  CHECK(parse_error("not json") ==
        "invalid JSON at offset 0: syntax error while parsing value - invalid literal");
  CHECK(parse_error("[true, fals]").find("offset 7: ") != std::string::npos);
  CHECK(parse_error("tru").find("offset 0: syntax error while parsing value - invalid literal") !=
        std::string::npos);
  CHECK(parse_error("1.").find("offset 2: syntax error while parsing value - invalid number; "
                               "expected digit after '.'") != std::string::npos);
  CHECK(parse_error("1e+").find("offset 3: syntax error while parsing value - invalid number; "
                                "expected digit after exponent sign") != std::string::npos);
  CHECK(parse_error("\"abc").find("offset 4: syntax error while parsing value - invalid string: "
                                  "missing closing quote") != std::string::npos);
  CHECK(parse_error(R"("\x")").find("offset 2: syntax error while parsing value - invalid string: "
                                    "forbidden character after backslash") != std::string::npos);
  CHECK(parse_error(R"("\u12G4")")
            .find("offset 5: syntax error while parsing value - invalid "
                  "string: '\\u' must be followed by 4 hex digits") != std::string::npos);
  CHECK(parse_error("{\"a\":1,\"b\":2,\"a\":3}") ==
        "invalid JSON at offset 0: object repeats key \"a\"");
  // The token read so far is not repeated: a bad byte at the end of a long string gives a
  // short message.
  const std::string long_string = "\"" + std::string(100000, 'a') + "\x01\"";
  CHECK(parse_error(long_string).size() < 200);
  CHECK(parse_error(long_string).find("offset 100001: ") != std::string::npos);
}

// Each of these a lenient reader accepts; RFC 8259 does not, and neither does Json::parse.
TEST_CASE("Json::parse refuses what RFC 8259 does not allow, at the offending byte") {
  // Leading zeros, and numbers cut short or spelled otherwise.
  CHECK(parse_error("01").find("offset 1: ") != std::string::npos);
  CHECK(parse_error("-01").find("offset 2: ") != std::string::npos);
  CHECK(parse_error("[00]").find("offset 2: ") != std::string::npos);
  CHECK(parse_error("-").find("offset 1: syntax error while parsing value - invalid number; "
                              "expected digit after '-'") != std::string::npos);
  CHECK(parse_error("[1.]").find("offset 3: ") != std::string::npos);
  CHECK(parse_error(".5").find("offset 0: ") != std::string::npos);
  CHECK(parse_error("+1").find("offset 0: ") != std::string::npos);
  CHECK(parse_error("0x10").find("offset 1: ") != std::string::npos);
  CHECK(parse_error("1e").find("offset 2: ") != std::string::npos);
  // NaN and the infinities (Python's json writes them) are no JSON literals.
  for (const char* literal : {"NaN", "Infinity", "-Infinity", "nan", "inf"}) {
    CAPTURE(literal);
    CHECK(parse_error(literal).find("invalid JSON at offset ") == 0);
  }
  CHECK(parse_error(R"({"loss": NaN})").find("offset 9: ") != std::string::npos);
  CHECK(parse_error("True").find("offset 0: ") != std::string::npos);
  CHECK(parse_error("nul").find("offset 0: ") != std::string::npos);
  // Trailing commas, comments, single quotes and bare keys.
  CHECK(parse_error("[1,]").find("offset 3: ") != std::string::npos);
  CHECK(parse_error("{\"a\": [1, {\"b\": 2,}]}").find("offset 18: ") != std::string::npos);
  CHECK(parse_error("[1] // end").find("offset 4: ") != std::string::npos);
  CHECK(parse_error("/* c */ 1").find("offset 0: ") != std::string::npos);
  CHECK(parse_error("['a']").find("offset 1: ") != std::string::npos);
  CHECK(parse_error("{a: 1}").find("offset 1: ") != std::string::npos);
  // White space is space, tab, line feed and carriage return only.
  CHECK(parse_error("\f1").find("offset 0: ") != std::string::npos);
  CHECK(parse_error("1\v").find("offset 1: ") != std::string::npos);
  const std::string no_break_space = "\xC2\xA0";
  CHECK(parse_error(no_break_space + "1").find("offset 0: ") != std::string::npos);
  CHECK(parse_error("   ").find("offset 3: ") != std::string::npos);
  CHECK(parse_error("1 2").find("offset 2: ") != std::string::npos);
  // Control characters must be escaped inside strings; DEL (0x7F) need not be.
  CHECK(parse_error(std::string("\"a\0b\"", 5)).find("offset 2: ") != std::string::npos);
  CHECK(parse_error("\"\x1F\"").find("offset 1: ") != std::string::npos);
  CHECK(parse_error("{\"tab\there\": 1}").find("offset 5: ") != std::string::npos);
  CHECK(Json::parse("\"\x7F\"").as_string() == "\x7F");
  CHECK(Json::parse(R"("\u0000")").as_string() == std::string(1, '\0'));
  // Surrogates: a high one must be followed by a low one, and a low one must follow a high.
  CHECK(parse_error(R"("\ud83d")")
            .find("offset 7: syntax error while parsing value - invalid "
                  "string: surrogate U+D800..U+DBFF must be followed by "
                  "U+DC00..U+DFFF") != std::string::npos);
  CHECK(parse_error(R"("\ud83dx")").find("offset 7: ") != std::string::npos);
  CHECK(parse_error(R"("\ud83d\u0041")").find("offset 12: ") != std::string::npos);
  CHECK(parse_error(R"("\ude00")")
            .find("offset 6: syntax error while parsing value - invalid "
                  "string: surrogate U+DC00..U+DFFF must follow "
                  "U+D800..U+DBFF") != std::string::npos);
  CHECK(parse_error(R"("\ude00\ud83d")").find("offset 6: ") != std::string::npos);
}

TEST_CASE("Json::parse reads only UTF-8 text (RFC 8259 section 8.1)") {
  // The offset is a byte that cannot start a sequence, or the first that cannot continue it.
  CHECK(parse_error("[\"ok\", \"caf\xE9\"]")
            .find("offset 12: syntax error while parsing value - invalid string: ill-formed "
                  "UTF-8 byte") != std::string::npos);
  CHECK(parse_error("\"\xFF\"").find("offset 1: ") != std::string::npos);
  CHECK(parse_error("\"\xC3\"").find("offset 2: ") != std::string::npos);
  CHECK(parse_error("\"\xC0\xAF\"").find("offset 1: ") != std::string::npos);          // overlong
  CHECK(parse_error("\"\xED\xA0\x80\"").find("offset 2: ") != std::string::npos);      // surrogate
  CHECK(parse_error("\"\xF4\x90\x80\x80\"").find("offset 2: ") != std::string::npos);  // > U+10FFFF
  CHECK(Json::parse("\"\xF4\x8F\xBF\xBF\"").as_string() == "\xF4\x8F\xBF\xBF");        // U+10FFFF
}

TEST_CASE("Json::parse reads numbers as strtod does, and -0 as Python's json does") {
  // std::strtod (correctly rounded) is the reference for every accepted spelling.
  for (const char* text :
       {"0", "-0.0", "1E+2", "0.0e-0", "2.5e-3", "123456789012345678", "9007199254740993",
        "18446744073709551615", "18446744073709551616", "-9223372036854775808",
        "-9223372036854775809", "4.9e-324", "2.2250738585072011e-308", "0.1",
        "1.7976931348623157e308", "100000000000000000000000000000000000001"}) {
    CAPTURE(text);
    const double value = Json::parse(text).as_number();
    CHECK(value == std::strtod(text, nullptr));
    CHECK(std::signbit(value) == std::signbit(std::strtod(text, nullptr)));
  }
  // "-0" is an integer, and integer zero has no sign: json.loads("-0") is 0 as well.
  CHECK(Json::parse("-0").as_number() == 0.0);
  CHECK_FALSE(std::signbit(Json::parse("-0").as_number()));
}

TEST_CASE("Json::parse limits nesting depth") {
  std::string ok = std::string(512, '[') + std::string(512, ']');
  CHECK(Json::parse(ok).is_array());
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(parse_error(deep).find("offset 512: nesting deeper than 512") != std::string::npos);
  // Objects count as arrays do: the 513th '{' of {"a":{"a":... starts at byte 512 * 5.
  std::string objects;
  for (int i = 0; i < 513; ++i) objects += "{\"a\":";
  CHECK(parse_error(objects).find("offset 2560: nesting deeper than 512") != std::string::npos);
  std::string mixed = std::string(511, '[') + "{\"k\": [1]}" + std::string(511, ']');
  CHECK(parse_error(mixed).find("offset 517: nesting deeper than 512") != std::string::npos);
}

TEST_CASE("Json::parse refuses a repeated key at any depth, at its object's offset") {
  CHECK(parse_error(R"({"a": [{"b": 1, "c": 2, "b": 3}]})") ==
        "invalid JSON at offset 7: object repeats key \"b\"");
  CHECK(parse_error(R"({"x": {"y": {"z": 1, "z": 1}}})") ==
        "invalid JSON at offset 12: object repeats key \"z\"");
  // Keys compare after unescaping.
  CHECK(parse_error(R"({"a": 1, "\u0061": 2})") ==
        "invalid JSON at offset 0: object repeats key \"a\"");
  // The same key in sibling objects is no repeat.
  CHECK(Json::parse(R"([{"a": 1}, {"a": 2}])").as_array().size() == 2);
}

TEST_CASE("Json accessors name expected and actual kinds") {
  Json number = Json::number(2.5);
  CHECK_THROWS_WITH_AS(number.as_string(), "expected JSON string, got number", Error);
  CHECK_THROWS_WITH_AS(number.as_int(), "expected an integer, got 2.5", Error);
  CHECK_THROWS_WITH_AS(Json().as_bool(), "expected JSON boolean, got null", Error);
  CHECK_THROWS_WITH_AS(Json::string("a").as_array(), "expected JSON array, got string", Error);
  CHECK_THROWS_WITH_AS(Json::array({}).as_object(), "expected JSON object, got array", Error);
  CHECK_THROWS_WITH_AS(Json::number(1e19).as_int(), "expected an integer, got 1e+19", Error);
  CHECK(Json::number(-4398046511104.0).as_int() == -4398046511104);  // beyond int32

  Json object = Json::parse(R"({"n_layer": 12})");
  CHECK_THROWS_WITH_AS(object.at("n_head"), "missing key \"n_head\"", Error);
  CHECK_THROWS_WITH_AS(Json::array({}).at("k"),
                       "cannot look up key \"k\": expected JSON object, got array", Error);
  CHECK(Json::array({}).find("k") == nullptr);
  CHECK(Json::kind_name(Json::Kind::boolean) == std::string("boolean"));
}

TEST_CASE("Json builders, set and push_back") {
  Json object = Json::object({{"b", Json::number(1)}});
  object.set("a", Json::string("x"));
  object.set("b", Json::boolean(true));  // replaces in place
  CHECK(object.dump() == R"({"b":true,"a":"x"})");

  Json list = Json::array({});
  list.push_back(Json::number(1));
  list.push_back(Json());
  CHECK(list.dump() == "[1,null]");
  CHECK(list.kind() == Json::Kind::array);

  CHECK_THROWS_WITH_AS(list.set("k", Json()),
                       "cannot set key \"k\": expected JSON object, got array", Error);
  CHECK_THROWS_WITH_AS(object.push_back(Json()),
                       "cannot push_back: expected JSON array, got object", Error);
}

TEST_CASE("Json::dump prints numbers compactly and round-trips") {
  CHECK(Json::number(3).dump() == "3");
  CHECK(Json::number(-0.0).dump() == "0");
  CHECK(Json::number(0.1).dump() == "0.1");
  CHECK(Json::number(2.345678).dump() == "2.345678");
  CHECK(Json::number(1e-7).dump() == "1e-07");
  CHECK(Json::number(9007199254740991.0).dump() == "9007199254740991");
  CHECK(Json::number(std::numeric_limits<double>::quiet_NaN()).dump() == "null");
  CHECK(Json::number(-std::numeric_limits<double>::infinity()).dump() == "null");
  double third = 1.0 / 3.0;
  CHECK(Json::parse(Json::number(third).dump()).as_number() == third);
  double big = 1.5e300;
  CHECK(Json::parse(Json::number(big).dump()).as_number() == big);

  std::string text = R"({"a":[1,2.5,"s\n",true,null,{}],"b":{"c":[]}})";
  CHECK(Json::parse(text).dump() == text);
}

TEST_CASE("Json::quote escapes what JSON requires") {
  CHECK(Json::quote("plain") == "\"plain\"");
  CHECK(Json::quote("q\"b\\") == R"("q\"b\\")");
  CHECK(Json::quote(std::string("\x01\x1f\n\t", 4)) == R"("\u0001\u001f\n\t")");
  CHECK(Json::quote("\xE2\x82\xAC") == "\"\xE2\x82\xAC\"");
  // Every ASCII byte and UTF-8 of each length reads back as it was.
  std::string text;
  for (int c = 0; c < 128; ++c) text.push_back(static_cast<char>(c));
  text += "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  CHECK(Json::parse(Json::quote(text)).as_string() == text);
  // Other bytes pass through quote, but Json::parse reads UTF-8 only.
  CHECK(Json::quote("caf\xE9") == "\"caf\xE9\"");
  CHECK(parse_error(Json::quote("caf\xE9")).find("ill-formed UTF-8 byte") != std::string::npos);
}
