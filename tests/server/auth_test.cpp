// API keys (server/src/auth.h): the file's format and its refusals, which key a header carries.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "auth.h"

using attn::server::ApiKeys;
namespace fs = std::filesystem;

namespace {

std::string key_file(const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
  const fs::path p = fs::temp_directory_path() / ("attn_keys_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(p) << text;
  fs::permissions(p, perms);
  return p.string();
}

}  // namespace

TEST_CASE("a key file names its keys, a header is matched to its key's name", "[auth]") {
  const std::string path = key_file("# who may call\nalice:0123456789abcdef-alice\n\nbob:0123456789abcdef-bob\r\n0123456789abcdef-anon\n");
  const ApiKeys keys = ApiKeys::from_file(path);
  CHECK(keys.size() == 3);
  CHECK(keys.check("Bearer 0123456789abcdef-alice") == std::optional<std::string>("alice"));
  CHECK(keys.check("bearer 0123456789abcdef-bob") == std::optional<std::string>("bob"));     // the scheme in any case
  CHECK(keys.check("Bearer 0123456789abcdef-anon") == std::optional<std::string>("key-5"));  // named after its line
  CHECK_FALSE(keys.check("Bearer 0123456789abcdef-alicE"));
  CHECK_FALSE(keys.check("Bearer 0123456789abcdef-alice "));
  CHECK_FALSE(keys.check("0123456789abcdef-alice"));
  CHECK_FALSE(keys.check("Basic 0123456789abcdef-alice"));
  CHECK_FALSE(keys.check(""));
  fs::remove(path);
  CHECK(ApiKeys::from_value("0123456789abcdef", "env").check("Bearer 0123456789abcdef") == std::optional<std::string>("env"));
}

TEST_CASE("a key file others may read, or with a weak or unnamed key, is refused naming the file and line", "[auth]") {
  const auto refused = [](const std::string& text, const std::string& expected,
                          fs::perms perms = fs::perms::owner_read | fs::perms::owner_write) {
    const std::string path = key_file(text, perms);
    CHECK_THROWS_WITH(ApiKeys::from_file(path), Catch::Contains(path) && Catch::Contains(expected));
    fs::remove(path);
  };
  refused("alice:0123456789abcdef\n", "chmod 600", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  refused("alice:0123456789abcdef\n", "chmod 600", fs::perms::owner_read | fs::perms::others_read);
  refused("alice:short\n", ":1: key 'alice' is shorter than 16 characters");
  refused("\nalice:0123456789abcdef\nalice:0123456789abcdeg\n", ":3: two keys are named 'alice'");
  refused("al ice:0123456789abcdef\n", ":1: a key's name");
  refused("alice:0123456789 abcdef\n", ":1: key 'alice' has a space");
  refused("# nothing\n\n", "no API keys");
  CHECK_THROWS_WITH(ApiKeys::from_file("/nonexistent/keys.txt"), Catch::Contains("/nonexistent/keys.txt"));
  CHECK_THROWS_WITH(ApiKeys::from_value("short", "env"), Catch::Contains("ATTN_API_KEY"));
}
