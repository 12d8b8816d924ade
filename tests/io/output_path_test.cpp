// An output is never an input of the same job (io/output_path.h), and AtomicFile never
// renames over a special node (io/atomic_file.h).
#include "io/output_path.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "core/error.h"
#include "io/atomic_file.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using llmft::Error;
using llmft::io::AtomicFile;
using llmft::io::check_output_path;
using llmft::io::same_file;
using llmft::testing::TempDir;

TEST_CASE("same_file sees one file through every spelling") {
  TempDir dir;
  const std::string text = dir.write("x.txt", "text");
  const std::string other = dir.write("y.txt", "text");
  fs::create_symlink(text, dir.file("link.txt"));
  fs::create_hard_link(text, dir.file("hard.txt"));
  fs::create_directory(dir.file("sub"));
  CHECK(same_file(text, text));
  CHECK(same_file(text, (dir.path() / "sub" / ".." / "." / "x.txt").string()));
  CHECK(same_file(text, dir.file("link.txt")));
  CHECK(same_file(dir.file("hard.txt"), text));
  CHECK_FALSE(same_file(text, other));
  // Neither exists: the same path once resolved; one exists: never the same.
  CHECK(same_file(dir.file("new.tok"), (dir.path() / "sub" / ".." / "new.tok").string()));
  CHECK(same_file(dir.file("new_dir"), dir.file("new_dir/")));
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  CHECK(same_file("new_dir", "./new_dir/"));
  fs::current_path(cwd);
  CHECK_FALSE(same_file(dir.file("new.tok"), dir.file("other.tok")));
  CHECK_FALSE(same_file(dir.file("new.tok"), text));
}

TEST_CASE("check_output_path refuses an input, naming both options and paths") {
  TempDir dir;
  const std::string text = dir.write("x.txt", "text");
  fs::create_symlink(text, dir.file("link.txt"));
  const std::vector<llmft::io::NamedInput> inputs = {{"--data", ""},
                                                     {"--input", dir.file("link.txt")}};
  const std::string names_both =
      "--output " + text + " is the same file as --input " + dir.file("link.txt");
  CHECK_THROWS_WITH_AS(check_output_path(text, "--output", inputs),
                       doctest::Contains(names_both.c_str()), Error);
  CHECK_THROWS_WITH_AS(check_output_path(text, "--output", inputs),
                       doctest::Contains("give --output another path"), Error);
  CHECK_NOTHROW(check_output_path(dir.file("x.tok"), "--output", inputs));
  CHECK_NOTHROW(check_output_path("", "--metrics", inputs));
  // An input directory may hold the output.
  CHECK_NOTHROW(check_output_path(dir.file("x.tok"), "--output", {{"--init-from", dir.file("")}}));
  CHECK_THROWS_AS(
      check_output_path(dir.path().string(), "--metrics", {{"--init-from", dir.file("")}}), Error);
}

TEST_CASE("AtomicFile refuses a special node before creating its temp file") {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string fifo_refused = fifo + " is a FIFO; llmft replaces an output by renaming";
  CHECK_THROWS_WITH_AS(AtomicFile{fifo}, doctest::Contains(fifo_refused.c_str()), Error);
  const std::string directory_refused = "--plan-json " + dir.path().string() + " is a directory";
  CHECK_THROWS_WITH_AS(llmft::io::check_replaceable(dir.path().string(), "--plan-json"),
                       doctest::Contains(directory_refused.c_str()), Error);
  CHECK_THROWS_WITH_AS(AtomicFile{"/dev/null"},
                       doctest::Contains("/dev/null is a character device"), Error);
  CHECK(fs::is_fifo(fifo));
  CHECK_FALSE(fs::exists(llmft::io::partial_path(fifo)));
  // A symbolic link is replaced, not the file it points to.
  fs::create_symlink("/dev/null", dir.file("link"));
  AtomicFile file(dir.file("link"));
  file.commit();
  CHECK(fs::is_regular_file(dir.file("link")));
  CHECK(fs::is_character_file("/dev/null"));
}
