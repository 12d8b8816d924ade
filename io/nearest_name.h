// The "did you mean" of a misspelt name: the known name nearest to it in edit distance
// (insertions, deletions, substitutions and swaps of two neighbouring characters), when
// that is close enough to be a slip rather than another word.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmft::io {

// The candidate nearest to `name`, if it is at most 2 edits away and those edits change
// at most a third of `name` ("rope_scalling" -> "rope_scaling"; "frobnicate" -> none).
// The first candidate wins a tie.
std::optional<std::string> nearest_name(std::string_view name,
                                        const std::vector<std::string_view>& candidates);

}  // namespace llmft::io
