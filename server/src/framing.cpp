#include "framing.h"

#include <algorithm>
#include <cctype>

namespace attn::server {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool folded(std::string_view head) {
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2))
    if (at + 2 < head.size() && (head[at + 2] == ' ' || head[at + 2] == '\t')) return true;
  return false;
}

bool takes_no_body(std::string_view method) {
  for (const char* m : {"GET", "HEAD", "OPTIONS", "DELETE", "TRACE", "CONNECT"})
    if (method == m) return true;
  return false;
}

std::optional<Refusal> framing_refusal(const Head& head, const Framing& framing) {
  if (framing.version != 10 && framing.version != 11) return Refusal{505, "framing", "HTTP/1.0 and HTTP/1.1 only"};
  std::size_t hosts = 0, encodings = 0;
  for (const auto& [name, value] : head.fields) {
    if (iequals(name, "host")) ++hosts;
    if (iequals(name, "transfer-encoding")) ++encodings;
  }
  if (head.target.empty() || head.target[0] != '/') return Refusal{400, "framing", "the request target must be a path (/...)"};
  if (hosts > 1 || (framing.version == 11 && hosts == 0))
    return Refusal{400, "framing", "an HTTP/1.1 request needs exactly one Host field"};
  if (encodings > 0) {
    const auto te = head.field("transfer-encoding");
    if (encodings > 1 || framing.version == 10 || !iequals(trim(*te), "chunked"))
      return Refusal{400, "framing", "Transfer-Encoding must be exactly 'chunked' (one field, HTTP/1.1)"};
  }
  const bool has_body = framing.chunked || (framing.length && *framing.length > 0);
  if (takes_no_body(head.method) && has_body) return Refusal{400, "framing", head.method + " takes no body"};
  if (!takes_no_body(head.method) && !framing.chunked && !framing.length)
    return Refusal{411, "length_required", head.method + " needs a Content-Length (or Transfer-Encoding: chunked)"};
  if (const auto coding = head.field("content-encoding"); coding && !iequals(trim(*coding), "identity"))
    return Refusal{415, "content_encoding", "Content-Encoding '" + std::string(trim(*coding)) + "': send the body unencoded"};
  if (const auto expect = head.field("expect"); expect && !iequals(trim(*expect), "100-continue"))
    return Refusal{417, "expectation", "the only Expect understood is 100-continue"};
  return std::nullopt;
}

}  // namespace attn::server
