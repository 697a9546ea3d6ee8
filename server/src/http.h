#pragma once
/// The server's connection layer: the one HTTP implementation that reads and writes `attn serve`'s
/// bytes (Boost.Beast's parser and serializer on Boost.Asio, TLS through asio::ssl and OpenSSL). It
/// owns the listening socket, every connection, the framing of each request, the limits and the
/// deadlines; the routes (routes.h) see only requests it accepted whole, so no second parser can
/// read the same bytes differently.
///
/// Framing. A request is refused with 400 and its connection closed when its framing could be read
/// two ways: Content-Length with Transfer-Encoding, two Transfer-Encoding fields or one other than
/// exactly `chunked`, conflicting lengths, a line ending in a bare LF, a folded header line
/// (obs-fold), a body on GET, HEAD, OPTIONS, DELETE or TRACE, a target that is not a path, a missing
/// or repeated Host. A POST without a length is 411, a body in any Content-Encoding but identity 415
/// (nothing is ever inflated), an Expect other than 100-continue 417, a version other than 1.0 and
/// 1.1 505. Range is never honoured (a whole 200 answer).
///
/// Limits. Headers (and chunked trailers) over `max_head` bytes: 431; a body over `max_body` in any
/// framing: 413. Both refusals come with Connection: close, after which the connection reads and
/// discards what the client still sends (at most `linger_bytes`, for at most `linger`; over TLS
/// before its close_notify), so the client reads its answer instead of a reset.
///
/// Deadlines, each the whole step's, never per read or write: a TLS handshake and a request (from
/// its first byte: headers and body) within `request_read` (else 408); an idle keep-alive connection
/// closes after `keep_alive`; a response must be written within `write_timeout` (else the
/// connection closes), so a client that does not read cannot hold a connection.
///
/// Connections. At most `per_client` per client address (more: 429); at most `max_connections` in
/// all: a new one then closes the idle connection idle longest or, with none idle, the one whose
/// unfinished request (or handshake) began first; only when every connection is running a request
/// is the new one answered 503. Requests are answered in order on a connection; a handler runs on
/// one of `threads` threads and may answer later from any thread (nothing blocks the event loop).
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attn::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  ///< 0: any free port
  int threads = 2;  ///< the event loop's threads
  std::size_t max_connections = 512;
  std::size_t per_client = 128;
  std::size_t max_head = 16384;      ///< request line and headers; chunked trailers
  std::size_t max_body = 1 << 20;    ///< body bytes, whatever the framing
  std::size_t keep_alive_max = 100;  ///< requests per connection
  std::chrono::milliseconds request_read{10000};
  std::chrono::milliseconds keep_alive{5000};
  std::chrono::milliseconds write_timeout{10000};
  /// After an answer that closes the connection while the client may still be sending (a refused
  /// body: 413, 411, 415, 431, ...), what is read and dropped at most before closing: a client that
  /// sends its whole body before reading then reads its answer, not a reset.
  std::chrono::milliseconds linger{2000};
  std::size_t linger_bytes = 16 << 20;
  std::string tls_cert, tls_key;  ///< PEM files; both or neither
};

/// A request's line and headers, as the connection layer accepted them.
struct Head {
  std::string method;                                       ///< as sent (upper case for the known ones)
  std::string target;                                       ///< as sent: a path and an optional ?query
  std::string path;                                         ///< the target before '?', not decoded
  std::string query;                                        ///< after '?', not decoded
  int version = 11;                                         ///< 10 or 11
  std::string client;                                       ///< the peer's address
  std::vector<std::pair<std::string, std::string>> fields;  ///< (name, value) as received, in order
  bool has_body = false;
  std::chrono::steady_clock::time_point started;  ///< when the head was complete

  // What the handler's accept() found, for its handle():
  std::size_t route = 0;  ///< the route matched
  std::string principal;  ///< the API key's name ("" without keys)

  /// The first value of field `name` (any case), or nullopt. Values are never %-decoded.
  std::optional<std::string> field(std::string_view name) const;
};

struct Request {
  Head head;
  std::string body;  ///< exactly the bytes the framing delimited (de-chunked)
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra fields (Allow, Retry-After, ...)
  bool close = false;                                        ///< Connection: close after it
};

/// {"error": {"status": N, "message": "..."}} (a message may quote a client's bytes: invalid UTF-8
/// is replaced, never an exception).
Response error_response(int status, const std::string& message);

/// Answers a request; callable from any thread, once.
using Respond = std::function<void(Response)>;

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  /// A request whose framing is sound, before its body is read: a refusal (written; then the
  /// connection closes if a body was to follow) or nullopt to read the body and call `handle`.
  virtual std::optional<Response> accept(Head& head) = 0;
  /// A whole request. `respond` may be called later, from any thread.
  virtual void handle(Request request, Respond respond) = 0;
  /// The connection layer answered or closed a request or connection itself ("read_timeout" 408,
  /// "per_client" 429, "saturated" 503, "head_too_large" 431, "body_too_large" 413, "framing" 400,
  /// "length_required" 411, ...).
  virtual void refused(const std::string& reason, int status) = 0;
};

/// Whether `host` names this machine only: a literal loopback address (127.0.0.0/8, ::1) or
/// "localhost". The address is parsed, not compared as text.
bool is_loopback(const std::string& host);

/// The addresses of this machine's interfaces and its host name (what a wildcard bind answers to).
std::vector<std::string> local_names();

class HttpServer {
 public:
  HttpServer(const HttpOptions& options, HttpHandler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Loads the TLS certificate and key if given (a key file others may read, a certificate that does
  /// not match the key, or an unreadable file: std::invalid_argument naming the file), binds and
  /// listens; the port (the one given, or the free one chosen). Throws std::runtime_error.
  int bind();
  /// Starts accepting, on `threads` threads.
  void start();
  /// Stops accepting and closes every connection no request is running on; the requests running
  /// are answered (Connection: close). Returns once every connection and thread has ended.
  void stop();
  /// Connections open now (a gauge for /metrics).
  std::size_t open_connections() const;
  bool tls() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::server
