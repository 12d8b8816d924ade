// Fuzz target: Json::parse (nlohmann-json's SAX parser and llmft's builder) on arbitrary
// text, then parse_hf_config on what it accepts. llmft::Error is the expected answer to bad
// input, and its offset must lie within the text (the end of input is offset size); an
// accepted document must dump to text that parses back to the same dump.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "fuzz/check.h"
#include "io/hf_config.h"
#include "io/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using llmft::io::Json;
  Json json;
  try {
    json = Json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const llmft::Error& error) {
    const std::string_view prefix = "invalid JSON at offset ";
    const std::string message = error.what();
    FUZZ_CHECK(message.compare(0, prefix.size(), prefix) == 0);
    FUZZ_CHECK(std::strtoull(message.c_str() + prefix.size(), nullptr, 10) <= size);
    return 0;
  }
  const std::string dumped = json.dump();
  try {
    FUZZ_CHECK(Json::parse(dumped).dump() == dumped);
  } catch (const llmft::Error&) {
    FUZZ_CHECK(!"a dumped document does not parse");
  }
  try {
    const llmft::ModelConfig config = llmft::io::parse_hf_config(json, "fuzz config.json");
    const Json written = llmft::io::hf_config_json(config);
    llmft::io::parse_hf_config(Json::parse(written.dump()), "fuzz config.json, rewritten");
  } catch (const llmft::Error&) {
  }
  return 0;
}
