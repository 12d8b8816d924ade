// generation_config.json (io/generation_config.h): eos_token_id as one id or a list, null
// as none, a missing file as an empty config, bad ids refused naming the file and key;
// written back with a list only when there are several ids.
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "io/generation_config.h"
#include "tests/support/temp_dir.h"

namespace llmft::io {
namespace {

TEST_CASE("generation_config.json: eos as an id or a list, absent keys and files") {
  testing::TempDir dir;
  CHECK(read_generation_config(dir.path().string()).eos_token_ids.empty());
  dir.write("generation_config.json",
            R"({"bos_token_id": 1, "eos_token_id": [2, 9, 2], "pad_token_id": null})");
  GenerationConfig config = read_generation_config(dir.path().string());
  CHECK(config.bos_token_id == 1);
  CHECK(config.eos_token_ids == std::vector<int64_t>{2, 9});
  CHECK(!config.pad_token_id.has_value());
  CHECK(generation_config_json(config).dump() == R"({"bos_token_id":1,"eos_token_id":[2,9]})");
  dir.write("generation_config.json", R"({"eos_token_id": 5, "do_sample": true})");
  config = read_generation_config(dir.path().string());
  CHECK(config.eos_token_ids == std::vector<int64_t>{5});
  config.pad_token_id = 0;
  CHECK(generation_config_json(config).dump() == R"({"eos_token_id":5,"pad_token_id":0})");
}

TEST_CASE("generation_config.json: a token id that is not one is refused by file and key") {
  testing::TempDir dir;
  dir.write("generation_config.json", R"({"eos_token_id": [2, -1]})");
  CHECK_THROWS_WITH_AS(read_generation_config(dir.path().string()),
                       doctest::Contains("generation_config.json: eos_token_id must be a token id"),
                       Error);
  dir.write("generation_config.json", R"({"eos_token_id": 2,)");
  CHECK_THROWS_WITH_AS(read_generation_config(dir.path().string()),
                       doctest::Contains("generation_config.json: invalid JSON"), Error);
}

}  // namespace
}  // namespace llmft::io
