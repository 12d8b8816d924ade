// nearest_name: the "did you mean" of a misspelt key or option.
#include "io/nearest_name.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

using llmft::io::nearest_name;

TEST_CASE("a slip of one or two edits finds the intended name") {
  const std::vector<std::string_view> keys = {"rope_scaling", "rope_theta", "tie_word_embeddings",
                                              "n_layer",      "n_head",     "n_embd"};
  CHECK(nearest_name("rope_scalling", keys) == std::optional<std::string>("rope_scaling"));
  CHECK(nearest_name("tie_word_embedding", keys) ==
        std::optional<std::string>("tie_word_embeddings"));
  CHECK(nearest_name("n_layers", keys) == std::optional<std::string>("n_layer"));
  CHECK(nearest_name("rope_thtea", keys) == std::optional<std::string>("rope_theta"));  // a swap
  CHECK(nearest_name("n_hed", keys) == std::optional<std::string>("n_head"));
}

TEST_CASE("a word that is no slip of a known name finds none") {
  const std::vector<std::string_view> keys = {"n_layer", "n_head", "vocab_size"};
  CHECK_FALSE(nearest_name("frobnicate", keys).has_value());
  CHECK_FALSE(nearest_name("n_ctx", keys).has_value());  // 3 edits from n_head
  CHECK_FALSE(nearest_name("ab", {"abc"}).has_value());  // one edit is half of "ab"
  CHECK_FALSE(nearest_name("x", {}).has_value());
}
