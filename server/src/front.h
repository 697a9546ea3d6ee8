#pragma once
/// The server's front end: it owns the listening socket and every connection, and hands a request
/// to an HTTP thread only once all of it (headers and body) has arrived. One event thread accepts
/// and reads every connection without blocking (poll), so a client that sends its headers a byte
/// at a time, or connects and sends nothing, costs a file descriptor and a buffer, never a thread:
///
///   - a request must arrive whole within `request_read` of its first byte (else 408, closed);
///   - an idle keep-alive connection is closed after `keep_alive`, and the longest-idle ones first
///     when `max_connections` are open and another client connects;
///   - one client address may hold `per_client` connections (more: 429, closed);
///   - with `max_connections` open and none idle, or `max_ready` complete requests already waiting
///     for an HTTP thread, a new one is answered 503 with Retry-After at once, not left hanging.
///
/// The HTTP threads parse and route the buffered request with cpp-httplib (Server::process_request
/// on a Stream over the buffer), so every route, error handler and limit of the server applies as
/// before; a response is written with a `write_timeout` per write.
///
/// With `tls_cert` and `tls_key` it speaks HTTPS only (TLS 1.2 or later, OpenSSL): the event thread
/// also runs each handshake without blocking (within `request_read`), so a client that stalls its
/// handshake holds no thread either. cpp-httplib's own SSLServer cannot do that (a connection holds
/// a pool thread from accept to close), hence OpenSSL here directly, the library it uses.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <httplib.h>

namespace attn::server {

/// Where a request in `bytes` ends, once it has arrived: `complete` with the length of its head
/// and body, or `status` (431: headers over `max_head`; 400: a malformed Content-Length), or
/// neither (wait for more bytes). A body over `max_body` counts as complete at its head: the HTTP
/// thread answers 413 without reading it. Chunked bodies are complete at their last chunk.
struct RequestExtent {
  bool complete = false;
  std::size_t length = 0;
  int status = 0;
};
RequestExtent request_extent(std::string_view bytes, std::size_t max_head, std::size_t max_body);

struct FrontOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                  ///< 0: any free port
  int threads = 16;                 ///< HTTP threads
  std::size_t max_connections = 512;
  std::size_t per_client = 128;
  std::size_t max_ready = 256;      ///< complete requests waiting for an HTTP thread
  std::size_t max_head = 16384;     ///< request line and headers
  std::size_t max_body = 1 << 20;
  std::size_t keep_alive_max = 100;  ///< requests per connection
  std::chrono::milliseconds request_read{10000};
  std::chrono::milliseconds keep_alive{5000};
  std::chrono::milliseconds write_timeout{10000};
  std::string tls_cert, tls_key;  ///< PEM files; both or neither
};

/// cpp-httplib's router: its protected process_request made callable on our streams.
class Router : public httplib::Server {
 public:
  using httplib::Server::process_request;
};

class Front {
 public:
  /// `refused(reason, status)` is told of every connection answered and closed by the front end
  /// itself ("read_timeout" 408, "per_client" 429, "saturated" 503, "head_too_large" 431, ...).
  Front(const FrontOptions& options, Router& router, std::function<void(const std::string&, int)> refused);
  ~Front();
  Front(const Front&) = delete;
  Front& operator=(const Front&) = delete;

  /// Loads the TLS certificate and key if given: a key file others may read, a certificate that does not
  /// match the key, or an unreadable file is std::invalid_argument naming the file.
  /// Binds and listens; the port (the one given, or the free one chosen). Throws std::runtime_error.
  int bind();
  /// Starts the event thread and the HTTP threads.
  void start();
  /// Stops accepting and closes the connections no request is running on; the requests running
  /// finish and their responses are written. Returns once every thread has ended.
  void stop();
  /// Connections open now (a gauge for /metrics).
  std::size_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attn::server
