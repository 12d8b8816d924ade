// Output paths checked against the inputs of the same job: a job never writes a file it
// reads (the text it tokenizes, the token file it trains on), however the two paths are
// spelled — "./x", a symbolic link, a hard link.
#pragma once

#include <string>
#include <vector>

namespace llmft::io {

// An input of a job: the option that names it ("--data") and its path.
struct NamedInput {
  std::string option;
  std::string path;
};

// Whether `a` and `b` name the same file: the same device and inode when both exist, else
// the same weakly canonical path.
bool same_file(const std::string& a, const std::string& b);

// Throws llmft::Error naming `option`, `path`, the input's option and path and what to do
// when `path` is the same file as one of `inputs`. An empty `path` or input path is skipped;
// an output inside an input directory is fine.
void check_output_path(const std::string& path, const std::string& option,
                       const std::vector<NamedInput>& inputs);

}  // namespace llmft::io
