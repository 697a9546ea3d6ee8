// The one way attn writes files: whole or not at all.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/io/atomic_file.h"

using namespace attn;

TEST_CASE("atomic writes leave no temporary behind and replace whole files", "[io]") {
  const auto dir = std::filesystem::temp_directory_path() / "attn_atomic_test";
  std::filesystem::remove_all(dir);
  io::ensure_directory(dir.string());
  const std::string path = (dir / "f.txt").string();
  io::write_file_atomic(path, "first");
  io::write_file_atomic(path, "second");
  CHECK(io::read_file(path) == "second");
  {
    io::StagedFiles staged;
    staged.add((dir / "g.txt").string(), "never committed");
  }
  CHECK_FALSE(std::filesystem::exists(dir / "g.txt"));
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  CHECK_THROWS_WITH(io::read_file((dir / "missing").string()), Catch::Contains("missing: cannot open"));
  // A symlink (like /dev/stdout -> /proc/self/fd/1) is written through, never replaced.
  std::filesystem::create_symlink(path, dir / "link.txt");
  io::write_file_atomic((dir / "link.txt").string(), "third");
  CHECK(std::filesystem::is_symlink(dir / "link.txt"));
  CHECK(io::read_file(path) == "third");
  std::filesystem::remove_all(dir);
}

TEST_CASE("write_atomic: a writer that fails leaves the previous file and no temporary", "[io]") {
  const auto dir = std::filesystem::temp_directory_path() / ("attn_atomic_fail_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  io::ensure_directory(dir.string());
  const std::string path = (dir / "model.pt").string();
  io::write_file_atomic(path, "the previous model");
  CHECK_THROWS_WITH(io::write_atomic(path,
                                     [](const std::string& tmp) {
                                       std::ofstream(tmp) << "half of a new";
                                       throw std::runtime_error("disk full");
                                     }),
                    "disk full");
  CHECK(io::read_file(path) == "the previous model");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.is_regular_file();
  CHECK(entries == 1);
  io::write_atomic(path, [](const std::string& tmp) { std::ofstream(tmp) << "a new model"; });
  CHECK(io::read_file(path) == "a new model");
  std::filesystem::remove_all(dir);
}
