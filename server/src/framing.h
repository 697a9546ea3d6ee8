#pragma once
/// How the connection layer judges a request's head before any body is read (http.h: "Framing"):
/// framing that could be read two ways, a body where none may be, an encoding or expectation it does
/// not take. Pure functions of what the parser read, so each refusal is tested without a socket.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http.h"

namespace attn::server {

/// An answer the connection layer gives itself, then closes: the status, the reason counted in
/// /metrics (HttpHandler::refused) and the message of the JSON error.
struct Refusal {
  int status = 400;
  std::string reason;
  std::string message;
};

/// What the parser read of a head besides its fields.
struct Framing {
  unsigned version = 11;                ///< as sent: 10 for HTTP/1.0, 11 for HTTP/1.1, anything else refused
  bool chunked = false;                 ///< Transfer-Encoding: chunked
  std::optional<std::uint64_t> length;  ///< Content-Length
};

/// The refusal a head earns, or nullopt: 505 another version; 400 a target not a path, no or two Host
/// fields on HTTP/1.1, Transfer-Encoding other than one `chunked` field on HTTP/1.1, a body on a
/// method that takes none; 411 a body-taking method without a length; 415 a Content-Encoding but
/// identity; 417 an Expect but 100-continue.
std::optional<Refusal> framing_refusal(const Head& head, const Framing& framing);

/// Whether a head (request line and fields, CRLF-separated) has a line folded onto the next
/// (obs-fold: CRLF then a space or tab).
bool folded(std::string_view head);

/// GET, HEAD, OPTIONS, DELETE, TRACE and CONNECT take no body.
bool takes_no_body(std::string_view method);

/// Spaces and tabs trimmed from both ends.
std::string_view trim(std::string_view s);

/// Whether two ASCII strings are equal ignoring case.
bool iequals(std::string_view a, std::string_view b);

}  // namespace attn::server
