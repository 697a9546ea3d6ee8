#include "auth.h"

#include <sys/stat.h>

#include <cctype>
#include <fstream>
#include <stdexcept>

#include <openssl/crypto.h>
#include <openssl/evp.h>

namespace attn::server {
namespace {

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 || length != digest.size())
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  return digest;
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

}  // namespace

void ApiKeys::add(const std::string& name, std::string_view key, const std::string& where) {
  if (!valid_name(name))
    throw std::invalid_argument(where + ": a key's name is letters, digits, '-', '_' or '.' (at most 64), got '" + name + "'");
  for (const Key& k : keys_)
    if (k.name == name) throw std::invalid_argument(where + ": two keys are named '" + name + "'");
  if (key.size() < 16) throw std::invalid_argument(where + ": key '" + name + "' is shorter than 16 characters");
  for (char c : key)
    if (static_cast<unsigned char>(c) <= ' ' || c == 127)
      throw std::invalid_argument(where + ": key '" + name + "' has a space or control character");
  keys_.push_back({name, sha256(key)});
}

ApiKeys ApiKeys::from_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::invalid_argument(path + ": cannot read the API key file");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    throw std::invalid_argument(path + ": the API key file may be read by others; make it private (chmod 600 " + path + ")");
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot read the API key file");
  ApiKeys keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(number);
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos)
      keys.add("key-" + std::to_string(number), line, where);
    else
      keys.add(line.substr(0, colon), std::string_view(line).substr(colon + 1), where);
  }
  if (keys.empty()) throw std::invalid_argument(path + ": no API keys in the file");
  return keys;
}

ApiKeys ApiKeys::from_value(const std::string& key, const std::string& name) {
  ApiKeys keys;
  keys.add(name, key, "ATTN_API_KEY");
  return keys;
}

std::optional<std::string> ApiKeys::check(std::string_view authorization) const {
  static constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i)  // the scheme's name is case-insensitive (RFC 9110)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != std::tolower(static_cast<unsigned char>(kScheme[i])))
      return std::nullopt;
  const auto digest = sha256(authorization.substr(kScheme.size()));
  const Key* found = nullptr;
  for (const Key& k : keys_)  // every key is compared: the time does not depend on which one matched
    if (CRYPTO_memcmp(k.digest.data(), digest.data(), digest.size()) == 0) found = &k;
  if (!found) return std::nullopt;
  return found->name;
}

}  // namespace attn::server
