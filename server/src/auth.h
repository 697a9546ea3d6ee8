#pragma once
/// API keys: `attn serve --api-key-file F` (one key per line, `name:key` or `key`; blank lines and
/// lines starting with '#' are skipped) or ATTN_API_KEY (one key, named "env"). A request carries
/// `Authorization: Bearer KEY`; the server keeps only each key's SHA-256 and compares digests in
/// constant time (OpenSSL's CRYPTO_memcmp), so neither a key nor its length leaks through timing,
/// and logs and metrics name the key, never show it.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::server {

class ApiKeys {
 public:
  /// Reads a key file. Refuses (std::invalid_argument naming the file and line) a file others may
  /// read (like ssh: chmod 600), a key shorter than 16 characters or with spaces, a bad or repeated
  /// name, and a file without keys.
  static ApiKeys from_file(const std::string& path);
  /// One key from the environment (ATTN_API_KEY), named "env".
  static ApiKeys from_value(const std::string& key, const std::string& name);

  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }
  /// The name of the key an Authorization header carries ("Bearer KEY"), or nullopt.
  std::optional<std::string> check(std::string_view authorization) const;

 private:
  struct Key {
    std::string name;
    std::array<unsigned char, 32> digest;
  };
  void add(const std::string& name, std::string_view key, const std::string& where);
  std::vector<Key> keys_;
};

}  // namespace attn::server
