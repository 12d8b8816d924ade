// Human-readable byte sizes: "2GiB", "512MiB", "1.5GB", "1048576" <-> bytes.
#pragma once

#include <cstddef>
#include <string>

namespace llmft {

// Parses a size with an optional unit (B, KB, MB, GB, TB powers of 1000; KiB, MiB, GiB,
// TiB powers of 1024; case-insensitive). `what` names the input in the error message.
size_t parse_byte_size(const std::string& text, const std::string& what);

// Formats with binary units and 2 decimals, e.g. "1.50 GiB".
std::string format_bytes(double bytes);

}  // namespace llmft
