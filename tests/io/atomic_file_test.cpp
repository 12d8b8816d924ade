#include "io/atomic_file.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/error.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using llmft::Error;
using llmft::io::AtomicFile;
using llmft::io::write_file_atomically;
using llmft::io::write_shared_file_atomically;
using llmft::testing::TempDir;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("AtomicFile makes the contents visible only on commit") {
  TempDir dir;
  std::string path = dir.file("out.bin");
  {
    AtomicFile file(path);
    CHECK(file.temp_path() == dir.file(".out.bin.partial"));
    file.write("hello ", 6);
    file.write("world", 5);
    file.write(nullptr, 0);
    CHECK_FALSE(fs::exists(path));
    CHECK(fs::exists(file.temp_path()));
    file.commit();
    CHECK_FALSE(fs::exists(file.temp_path()));
    CHECK_THROWS_AS(file.write("x", 1), Error);
    CHECK_THROWS_AS(file.commit(), Error);
  }
  CHECK(read_all(path) == "hello world");
}

TEST_CASE("AtomicFile without commit removes the temp file and keeps the old contents") {
  TempDir dir;
  std::string path = dir.file("out.txt");
  write_file_atomically(path, "old");
  std::string temp_path;
  {
    AtomicFile file(path);
    temp_path = file.temp_path();
    file.write("new but partial", 15);
  }
  CHECK_FALSE(fs::exists(temp_path));
  CHECK(read_all(path) == "old");
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("write_file_atomically replaces the file") {
  TempDir dir;
  std::string path = dir.file("config.json");
  write_file_atomically(path, "{\"a\":1}");
  write_file_atomically(path, std::string("x\0y", 3));
  CHECK(read_all(path) == std::string("x\0y", 3));
}

TEST_CASE("AtomicFile errors name the path and the system error") {
  TempDir dir;
  std::string path = dir.file("missing_dir/out.bin");
  try {
    AtomicFile file(path);
    FAIL("expected AtomicFile to throw");
  } catch (const Error& e) {
    std::string message = e.what();
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find("No such file or directory") != std::string::npos);
  }

  // Renaming a file over a directory made there after the temp file fails at commit (one
  // there before is refused at once: output_path_test.cpp).
  std::string directory_path = dir.file("occupied");
  std::string temp_path;
  try {
    AtomicFile file(directory_path);
    temp_path = file.temp_path();
    fs::create_directories(fs::path(directory_path) / "child");
    file.write("x", 1);
    file.commit();
    FAIL("expected commit to throw");
  } catch (const Error& e) {
    std::string message = e.what();
    CHECK(message.find("cannot rename") != std::string::npos);
    CHECK(message.find(directory_path) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(temp_path));
}

TEST_CASE("AtomicFile's temp name is fixed, so a killed writer's file is replaced, not piled up") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  CHECK(llmft::io::partial_path(path) == dir.file(".model.safetensors.partial"));
  // What a process killed mid-write leaves behind.
  std::ofstream(llmft::io::partial_path(path)) << "half of an old write";
  write_file_atomically(path, "whole");
  CHECK(read_all(path) == "whole");
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("AtomicFile finished but not published stays invisible and is removed") {
  TempDir dir;
  const std::string path = dir.file("shard.bin");
  {
    AtomicFile file(path);
    file.write("bytes", 5);
    file.finish();
    CHECK(fs::exists(file.temp_path()));
    CHECK_FALSE(fs::exists(path));
    CHECK_THROWS_AS(file.write("x", 1), Error);
  }
  CHECK(fs::is_empty(dir.path()));
  AtomicFile file(path);
  CHECK_THROWS_AS(file.publish(), Error);  // not finished
  file.write("bytes", 5);
  file.finish();
  file.publish();
  CHECK(read_all(path) == "bytes");
}

TEST_CASE("Writers replacing one shared file at once each publish a whole file of their own") {
  // Two writers (two jobs' ranks 0 updating the calibration cache together), each replacing
  // the file 50 times with 64 KiB of its own letter: with one fixed temp name they would
  // write into the same temp file and the later rename would find it gone.
  TempDir dir;
  const std::string path = dir.file("calibration.json");
  const auto writer = [&](char letter, bool* failed) {
    const std::string contents(64 << 10, letter);
    for (int i = 0; i < 50; ++i) {
      try {
        write_shared_file_atomically(path, contents);
      } catch (const Error&) {
        *failed = true;
      }
    }
  };
  bool failed_a = false, failed_b = false;
  std::thread a(writer, 'a', &failed_a), b(writer, 'b', &failed_b);
  a.join();
  b.join();
  CHECK_FALSE(failed_a);
  CHECK_FALSE(failed_b);
  const std::string last = read_all(path);
  CHECK((last == std::string(64 << 10, 'a') || last == std::string(64 << 10, 'b')));
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}
