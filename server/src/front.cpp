#include "front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace attn::server {

// ---- Where a request ends ----

namespace {

bool equals_lower(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != lower[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Decimal digits only, without overflow; false otherwise.
bool parse_length(std::string_view s, std::size_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::size_t>(c - '0');
  }
  return true;
}

/// The end of a chunked body starting at `pos`: {complete, end, status}.
RequestExtent chunked_extent(std::string_view bytes, std::size_t pos, std::size_t max_body) {
  std::size_t body = 0;
  for (;;) {
    const std::size_t eol = bytes.find("\r\n", pos);
    if (eol == std::string_view::npos) return bytes.size() - pos > 64 ? RequestExtent{false, 0, 400} : RequestExtent{};
    std::string_view size_text = bytes.substr(pos, eol - pos);
    size_text = trim(size_text.substr(0, size_text.find(';')));  // chunk extensions are ignored
    if (size_text.empty() || size_text.size() > 15) return {false, 0, 400};
    std::size_t size = 0;
    for (char c : size_text) {
      const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (digit < 0) return {false, 0, 400};
      size = size * 16 + static_cast<std::size_t>(digit);
    }
    pos = eol + 2;
    if (size == 0) {  // the last chunk, then trailer lines up to an empty line
      if (bytes.substr(pos, 2) == "\r\n") return {true, pos + 2, 0};
      const std::size_t end = bytes.find("\r\n\r\n", pos);
      return end == std::string_view::npos ? RequestExtent{} : RequestExtent{true, end + 4, 0};
    }
    body += size;
    if (body > max_body) return {false, 0, 413};
    if (bytes.size() < pos + size + 2) return {};
    pos += size + 2;
  }
}

}  // namespace

RequestExtent request_extent(std::string_view bytes, std::size_t max_head, std::size_t max_body) {
  const std::size_t head_end = bytes.substr(0, max_head + 4).find("\r\n\r\n");
  if (head_end == std::string_view::npos) return bytes.size() > max_head ? RequestExtent{false, 0, 431} : RequestExtent{};
  const std::size_t head_length = head_end + 4;
  bool chunked = false, has_length = false;
  std::size_t length = 0;
  for (std::size_t pos = bytes.find("\r\n") + 2; pos < head_end;) {
    const std::size_t eol = bytes.find("\r\n", pos);
    const std::string_view line = bytes.substr(pos, eol - pos);
    pos = eol + 2;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // cpp-httplib judges the header's syntax
    const std::string_view name = line.substr(0, colon), value = trim(line.substr(colon + 1));
    if (equals_lower(name, "content-length")) {
      std::size_t n = 0;
      if (!parse_length(value, n) || (has_length && n != length)) return {false, 0, 400};
      has_length = true;
      length = n;
    } else if (equals_lower(name, "transfer-encoding")) {
      std::string lower(value);
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      chunked = lower.find("chunked") != std::string::npos;
    }
  }
  if (chunked && has_length) return {false, 0, 400};  // ambiguous framing (request smuggling)
  if (chunked) return chunked_extent(bytes, head_length, max_body);
  if (length > max_body) return {false, 0, 413};
  if (bytes.size() < head_length + length) return {};
  return {true, head_length + length, 0};
}

// ---- The front end ----

namespace {

using Clock = std::chrono::steady_clock;

struct Connection {
  int fd = -1;
  std::string peer_ip, local_ip;
  int peer_port = 0, local_port = 0;
  std::string buffer;            ///< received, not yet handed to cpp-httplib
  Clock::time_point first_byte;  ///< of the request being read (when the buffer is not empty)
  Clock::time_point idle_since;  ///< when its last request ended (or it connected)
  std::size_t served = 0;
  bool sent_continue = false;  ///< "100 Continue" sent for the request being read
  SSL* ssl = nullptr;          ///< with TLS
  bool handshaking = false;    ///< TLS handshake not finished (it must within request_read of accept)
  Clock::time_point accepted;
};

/// Reads or writes through TLS or the plain socket, without blocking: bytes (> 0), 0 at the end of the
/// stream, -1 when it would block (and `want_write` if TLS must write first), -2 on an error.
ssize_t transfer(Connection& c, char* read_to, const char* write_from, std::size_t size, bool& want_write) {
  want_write = false;
  if (!c.ssl) {
    const ssize_t n = read_to ? ::recv(c.fd, read_to, size, 0) : ::send(c.fd, write_from, size, MSG_NOSIGNAL);
    if (n >= 0) return n;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
  }
  ERR_clear_error();
  const int limit = static_cast<int>(std::min<std::size_t>(size, 1 << 30));
  const int n = read_to ? SSL_read(c.ssl, read_to, limit) : SSL_write(c.ssl, write_from, limit);
  if (n > 0) return n;
  switch (SSL_get_error(c.ssl, n)) {
    case SSL_ERROR_WANT_READ: return -1;
    case SSL_ERROR_WANT_WRITE: want_write = true; return -1;
    case SSL_ERROR_ZERO_RETURN: return 0;
    default: return -2;
  }
}

/// Waits until `fd` is ready for `events` or `deadline` passes.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left + 1, 60000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

/// cpp-httplib reads a request from the bytes the event thread buffered (all of it, by then), and
/// writes its response to the socket.
class BufferedStream : public httplib::Stream {
 public:
  BufferedStream(Connection& c, Clock::time_point read_deadline, std::chrono::milliseconds write_timeout)
      : c_(c), read_deadline_(read_deadline), write_timeout_(write_timeout) {}

  bool is_readable() const override { return offset_ < c_.buffer.size() || wait_for(c_.fd, POLLIN, read_deadline_); }
  bool is_writable() const override { return wait_for(c_.fd, POLLOUT, Clock::now() + write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (offset_ < c_.buffer.size()) {
      const std::size_t n = std::min(size, c_.buffer.size() - offset_);
      std::memcpy(ptr, c_.buffer.data() + offset_, n);
      offset_ += n;
      return static_cast<ssize_t>(n);
    }
    for (;;) {  // past what was buffered (not for a request the front end judged complete)
      bool want_write = false;
      const ssize_t n = transfer(c_, ptr, nullptr, size, want_write);
      if (n >= 0) return n;
      if (n == -2 || !wait_for(c_.fd, want_write ? POLLOUT : POLLIN, read_deadline_)) return -1;
    }
  }

  /// cpp-httplib writes a response's head and body in separate calls: they are collected and sent
  /// together by flush() (one TLS record and one system call instead of two, the first of them
  /// only 200 bytes), or as soon as 64 KiB are waiting.
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    if (out_.size() >= kFlushAt && !flush()) return -1;
    return static_cast<ssize_t>(size);
  }

  /// Sends what write() collected; false when the client is gone or too slow (the write timeout).
  bool flush() {
    std::size_t sent = 0;
    const Clock::time_point deadline = Clock::now() + write_timeout_;
    while (sent < out_.size()) {
      bool want_write = true;
      const ssize_t n = transfer(c_, nullptr, out_.data() + sent, out_.size() - sent, want_write);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n == -2 || n == 0 || !wait_for(c_.fd, want_write ? POLLOUT : POLLIN, deadline)) {
        out_.clear();
        return false;
      }
    }
    out_.clear();
    return true;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = c_.peer_ip, port = c_.peer_port; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = c_.local_ip, port = c_.local_port; }
  socket_t socket() const override { return c_.fd; }

  /// Drops what cpp-httplib read; a pipelined next request stays.
  void consume() { c_.buffer.erase(0, offset_); }

 private:
  Connection& c_;
  Clock::time_point read_deadline_;
  std::chrono::milliseconds write_timeout_;
  std::size_t offset_ = 0;
  static constexpr std::size_t kFlushAt = 65536;
  std::string out_;  ///< written, not yet sent
};

std::string address_text(const sockaddr_storage& a, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
  }
  return text;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    default: return "Service Unavailable";
  }
}

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  char text[256] = "unknown error";
  if (e) ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return text;
}

/// HTTPS with TLS 1.2 or later, the certificate chain and key from PEM files.
SSL_CTX* tls_context(const std::string& cert, const std::string& key) {
  if (cert.empty() || key.empty()) throw std::invalid_argument("--tls-cert and --tls-key go together");
  struct stat st {};
  if (::stat(key.c_str(), &st) != 0) throw std::invalid_argument("--tls-key " + key + ": cannot read it");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    throw std::invalid_argument("--tls-key " + key + ": others may read the private key; make it private (chmod 600 " + key + ")");
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) throw std::runtime_error("TLS: " + openssl_error());
  const auto fail = [ctx](const std::string& message) {
    SSL_CTX_free(ctx);
    throw std::invalid_argument(message + ": " + openssl_error());
  };
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) fail("TLS 1.2");
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) fail("--tls-cert " + cert);
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1)
    fail("--tls-key " + key + " cannot be read, or does not match --tls-cert " + cert);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ctx;
}

}  // namespace

struct Front::Impl {
  FrontOptions options;
  Router& router;
  std::function<void(const std::string&, int)> refused;
  int listen_fd = -1;
  int wake[2] = {-1, -1};
  SSL_CTX* tls = nullptr;
  std::thread event_thread;
  std::vector<std::thread> http_threads;

  // The event thread's alone.
  std::map<int, std::unique_ptr<Connection>> waiting;  ///< being read, or idle
  std::map<std::string, std::size_t> per_client;
  std::size_t busy = 0;  ///< handed to the HTTP threads, not yet back
  bool out_of_descriptors = false;  ///< accept failed for want of them: wait for a connection to close
  std::atomic<std::size_t> open{0};

  std::mutex mutex;
  std::condition_variable ready_cv;
  std::deque<std::unique_ptr<Connection>> ready;                     ///< complete requests
  std::deque<std::pair<std::unique_ptr<Connection>, bool>> returned;  ///< back from an HTTP thread: keep it open?
  bool stopping = false;

  Impl(const FrontOptions& o, Router& r, std::function<void(const std::string&, int)> f) : options(o), router(r), refused(std::move(f)) {}

  void notify() {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake[1], &byte, 1);  // a full pipe already wakes the loop
  }

  void close_connection(std::unique_ptr<Connection> c) {
    auto it = per_client.find(c->peer_ip);
    if (it != per_client.end() && --it->second == 0) per_client.erase(it);
    if (c->ssl) {
      if (!c->handshaking) SSL_shutdown(c->ssl);  // close_notify, best effort (the socket does not block)
      SSL_free(c->ssl);
    }
    ::close(c->fd);
    --open;
    out_of_descriptors = false;
  }

  /// Answers `status` with the server's JSON error and closes (best effort: the socket does not block).
  void refuse(std::unique_ptr<Connection> c, int status, const std::string& reason, const std::string& message) {
    const std::string body =
        nlohmann::json{{"error", {{"status", status}, {"message", message}}}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
                           "\r\nContent-Type: application/json\r\nConnection: close\r\n";
    if (status == 503 || status == 429) response += "Retry-After: 1\r\n";
    response += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    if (!c->handshaking) {  // (a client still in its TLS handshake cannot read an answer)
      bool want_write = false;
      transfer(*c, nullptr, response.data(), response.size(), want_write);
    }
    if (!c->ssl) ::shutdown(c->fd, SHUT_WR);
    refused(reason, status);
    close_connection(std::move(c));
  }

  /// A connection whose request is complete goes to the HTTP threads (or is answered 503).
  void hand_over(std::unique_ptr<Connection> c) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (ready.size() < options.max_ready) {
        ready.push_back(std::move(c));
        ++busy;
      }
    }
    if (c) return refuse(std::move(c), 503, "saturated", "the server is busy; retry later");
    ready_cv.notify_one();
  }

  /// Judges a connection's buffer after new bytes: complete, refused, or still waiting.
  void judge(std::unique_ptr<Connection> c) {
    const RequestExtent e = request_extent(c->buffer, options.max_head, options.max_body);
    if (e.status == 431) return refuse(std::move(c), 431, "head_too_large", "the request line and headers are too large");
    if (e.status == 413) return refuse(std::move(c), 413, "body_too_large", "the body is too large (--max-body-bytes)");
    if (e.status) return refuse(std::move(c), e.status, "malformed", "malformed request framing (Content-Length or chunks)");
    if (e.complete) return hand_over(std::move(c));
    if (!c->sent_continue && c->buffer.find("\r\n\r\n") != std::string::npos) {
      std::string head = c->buffer.substr(0, c->buffer.find("\r\n\r\n") + 2);
      for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const std::size_t expect = head.find("\r\nexpect: 100-continue\r\n");
      if (expect != std::string::npos) {  // the client waits for it before its body
        static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        bool want_write = false;
        transfer(*c, nullptr, kContinue, sizeof kContinue - 1, want_write);
        c->sent_continue = true;
        // Answered here: cpp-httplib must not send a second one when it reads the request.
        c->buffer.erase(expect, head.find("\r\n", expect + 2) - expect);
      }
    }
    const int fd = c->fd;
    waiting[fd] = std::move(c);
  }

  /// Reads what arrived (after the TLS handshake, when there is one); false once the connection is
  /// gone or its handshake failed.
  bool receive(Connection& c, Clock::time_point now) {
    if (c.handshaking) {
      ERR_clear_error();
      const int done = SSL_do_handshake(c.ssl);
      if (done != 1) {
        const int error = SSL_get_error(c.ssl, done);
        return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;  // wait for more of it
      }
      c.handshaking = false;
      c.idle_since = now;
    }
    char chunk[16384];
    for (;;) {
      bool want_write = false;
      const ssize_t n = transfer(c, chunk, nullptr, sizeof chunk, want_write);
      if (n > 0) {
        if (c.buffer.empty()) c.first_byte = now;
        c.buffer.append(chunk, static_cast<std::size_t>(n));
        if (c.buffer.size() > options.max_head + options.max_body + 65536) return true;  // judged too large next
        continue;
      }
      return n == -1;
    }
  }

  /// Closes the connection idle the longest; false if none is idle.
  bool close_longest_idle() {
    auto oldest = waiting.end();
    for (auto it = waiting.begin(); it != waiting.end(); ++it)
      if (it->second->buffer.empty() && !it->second->handshaking && (oldest == waiting.end() || it->second->idle_since < oldest->second->idle_since)) oldest = it;
    if (oldest == waiting.end()) return false;
    auto c = std::move(oldest->second);
    waiting.erase(oldest);
    close_connection(std::move(c));
    return true;
  }

  void accept_all(Clock::time_point now) {
    for (;;) {
      sockaddr_storage peer{};
      socklen_t length = sizeof peer;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        // Out of descriptors: the backlog holds the clients until a connection closes (polling the
        // listening socket meanwhile would spin).
        if (errno == EMFILE || errno == ENFILE) out_of_descriptors = true;
        return;
      }
      auto c = std::make_unique<Connection>();
      c->fd = fd;
      c->peer_ip = address_text(peer, c->peer_port);
      sockaddr_storage local{};
      length = sizeof local;
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) c->local_ip = address_text(local, c->local_port);
      c->idle_since = c->accepted = now;
      if (tls) {
        c->ssl = SSL_new(tls);
        if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
          if (c->ssl) SSL_free(c->ssl);
          ::close(fd);
          continue;
        }
        SSL_set_accept_state(c->ssl);
        c->handshaking = true;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // a response's header and body go out at once
      ++open;
      std::size_t& mine = per_client[c->peer_ip];
      ++mine;
      if (mine > options.per_client) {
        refuse(std::move(c), 429, "per_client", "too many connections from this address (--connections-per-client)");
        continue;
      }
      if (open > options.max_connections && !close_longest_idle()) {
        refuse(std::move(c), 503, "saturated", "the server has --max-connections open; retry later");
        continue;
      }
      waiting[fd] = std::move(c);
    }
  }

  /// Closes what waited too long: a request not whole within request_read (408), an idle
  /// connection after keep_alive. Returns the next deadline.
  Clock::time_point expire(Clock::time_point now) {
    Clock::time_point next = Clock::time_point::max();
    for (auto it = waiting.begin(); it != waiting.end();) {
      Connection& c = *it->second;
      const bool reading = !c.buffer.empty();
      const Clock::time_point deadline = c.handshaking ? c.accepted + options.request_read
                                         : reading     ? c.first_byte + options.request_read
                                                       : c.idle_since + options.keep_alive;
      if (deadline > now) {
        next = std::min(next, deadline);
        ++it;
        continue;
      }
      auto gone = std::move(it->second);
      it = waiting.erase(it);
      if (reading || gone->handshaking)
        refuse(std::move(gone), 408, "read_timeout", "the request did not arrive within --client-timeout-ms");
      else
        close_connection(std::move(gone));
    }
    return next;
  }

  /// Connections back from the HTTP threads: idle again (or reading a pipelined request), or closed.
  void take_back(Clock::time_point now) {
    std::deque<std::pair<std::unique_ptr<Connection>, bool>> back;
    {
      std::lock_guard<std::mutex> lock(mutex);
      back.swap(returned);
    }
    for (auto& [c, keep] : back) {
      --busy;
      if (!keep || stopping_now()) {
        close_connection(std::move(c));
        continue;
      }
      c->idle_since = now;
      c->sent_continue = false;
      if (c->ssl && SSL_pending(c->ssl) > 0 && !receive(*c, now)) {  // decrypted bytes poll() cannot see
        close_connection(std::move(c));
        continue;
      }
      if (c->buffer.empty()) {
        const int fd = c->fd;
        waiting[fd] = std::move(c);
      } else {
        c->first_byte = now;
        judge(std::move(c));
      }
    }
  }

  bool stopping_now() {
    std::lock_guard<std::mutex> lock(mutex);
    return stopping;
  }

  void event_loop() {
    std::vector<pollfd> fds;
    for (;;) {
      Clock::time_point now = Clock::now();
      take_back(now);
      if (stopping_now()) {
        if (listen_fd >= 0) ::close(listen_fd), listen_fd = -1;
        while (!waiting.empty()) {
          auto c = std::move(waiting.begin()->second);
          waiting.erase(waiting.begin());
          close_connection(std::move(c));
        }
        if (busy == 0) return;
      }
      const Clock::time_point next = expire(now);
      fds.clear();
      fds.push_back({wake[0], POLLIN, 0});
      if (listen_fd >= 0 && !out_of_descriptors) fds.push_back({listen_fd, POLLIN, 0});
      for (const auto& [fd, c] : waiting) fds.push_back({fd, POLLIN, 0});
      int timeout = -1;
      if (next != Clock::time_point::max())
        timeout = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
      if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) continue;
      now = Clock::now();
      if (fds[0].revents) {
        char drain[256];
        while (::read(wake[0], drain, sizeof drain) > 0) {
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        if (fds[i].fd == listen_fd) {
          accept_all(now);
          continue;
        }
        auto it = waiting.find(fds[i].fd);
        if (it == waiting.end()) continue;  // closed meanwhile (to make room)
        auto c = std::move(it->second);
        waiting.erase(it);
        if (!receive(*c, now))
          close_connection(std::move(c));
        else if (!c->buffer.empty())
          judge(std::move(c));
        else
          waiting[c->fd] = std::move(c);
      }
    }
  }

  void http_thread() {
    for (;;) {
      std::unique_ptr<Connection> c;
      bool last = false;
      {
        std::unique_lock<std::mutex> lock(mutex);
        ready_cv.wait(lock, [this] { return stopping || !ready.empty(); });
        if (ready.empty()) return;  // stopping, nothing left to answer
        c = std::move(ready.front());
        ready.pop_front();
        last = stopping;
      }
      ++c->served;
      last = last || c->served >= options.keep_alive_max;
      BufferedStream stream(*c, c->first_byte + options.request_read, options.write_timeout);
      bool closed = false;
      bool keep = false;
      try {
        keep = router.process_request(stream, last, closed, nullptr) && !closed && !last;
      } catch (...) {  // cpp-httplib answers handlers' exceptions itself; anything else ends the connection
      }
      keep = stream.flush() && keep;
      stream.consume();
      {
        std::lock_guard<std::mutex> lock(mutex);
        returned.emplace_back(std::move(c), keep);
      }
      notify();
    }
  }
};

Front::Front(const FrontOptions& options, Router& router, std::function<void(const std::string&, int)> refused)
    : impl_(std::make_unique<Impl>(options, router, std::move(refused))) {
  if (::pipe2(impl_->wake, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (!options.tls_cert.empty() || !options.tls_key.empty()) impl_->tls = tls_context(options.tls_cert, options.tls_key);
}

Front::~Front() {
  stop();
  if (impl_->tls) SSL_CTX_free(impl_->tls);
  for (int fd : impl_->wake) ::close(fd);
  if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
}

int Front::bind() {
  const FrontOptions& o = impl_->options;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string where = o.host + ":" + std::to_string(o.port);
  if (const int rc = ::getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &found); rc != 0)
    throw std::runtime_error(where + ": cannot listen (" + ::gai_strerror(rc) + ")");
  std::string error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      impl_->listen_fd = fd;
      break;
    }
    error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (impl_->listen_fd < 0) throw std::runtime_error(where + ": cannot listen (" + error + ")");
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  int port = 0;
  address_text(bound, port);
  return port;
}

void Front::start() {
  for (int i = 0; i < impl_->options.threads; ++i) impl_->http_threads.emplace_back([this] { impl_->http_thread(); });
  impl_->event_thread = std::thread([this] { impl_->event_loop(); });
}

void Front::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->stopping && !impl_->event_thread.joinable()) return;
    impl_->stopping = true;
  }
  impl_->ready_cv.notify_all();
  impl_->notify();
  for (auto& t : impl_->http_threads)
    if (t.joinable()) t.join();
  impl_->notify();
  if (impl_->event_thread.joinable()) impl_->event_thread.join();
}

std::size_t Front::open_connections() const { return impl_->open; }

}  // namespace attn::server
