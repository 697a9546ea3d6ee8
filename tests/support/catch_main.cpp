// Catch2's runner. Each test process gets a temporary directory of its own as TMPDIR (what
// std::filesystem::temp_directory_path and the apps a test starts read), removed when the run
// ends, so the tests' scratch files do not pile up in /tmp.
#define CATCH_CONFIG_RUNNER
#include <stdlib.h>  // mkdtemp, setenv

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  const char* outer = std::getenv("TMPDIR");
  const std::string pattern = std::string(outer && *outer ? outer : "/tmp") + "/attn-test-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const char* dir = mkdtemp(name.data());
  if (dir) setenv("TMPDIR", dir, 1);
  const int result = Catch::Session().run(argc, argv);
  std::error_code ignored;
  if (dir) std::filesystem::remove_all(dir, ignored);
  return result;
}
