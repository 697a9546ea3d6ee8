#include "http.h"

#include "connections.h"
#include "framing.h"

#include <ifaddrs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace attn::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;

namespace {

std::string address_text(const net::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).to_string();
  return a.to_string();
}

std::string openssl_error() {
  std::string text;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    text += (text.empty() ? "" : "; ") + std::string(buf);
  }
  return text.empty() ? "unknown error" : text;
}

/// HTTPS with TLS 1.2 or later (no renegotiation, no compression), the chain and key from PEM files.
std::unique_ptr<net::ssl::context> tls_context(const std::string& cert, const std::string& key) {
  if (cert.empty() || key.empty()) throw std::invalid_argument("--tls-cert and --tls-key go together");
  struct stat st {};
  if (::stat(key.c_str(), &st) != 0) throw std::invalid_argument("--tls-key " + key + ": cannot read it");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    throw std::invalid_argument("--tls-key " + key + ": others may read the private key; make it private (chmod 600 " + key + ")");
  auto context = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  ERR_clear_error();
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) throw std::runtime_error("TLS 1.2: " + openssl_error());
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1)
    throw std::invalid_argument("--tls-cert " + cert + ": " + openssl_error());
  if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx) != 1)
    throw std::invalid_argument("--tls-key " + key + " cannot be read, or does not match --tls-cert " + cert + ": " + openssl_error());
  return context;
}

/// What every connection shares (their book of connections: connections.h).
struct Shared {
  HttpOptions options;
  HttpHandler& handler;
  net::ssl::context* tls = nullptr;
  ConnectionRegistry registry;
  std::atomic<bool> stopping{false};
};

/// One connection, plain or TLS. Every handler of a connection runs on its strand.
template <bool kTls>
class Session : public Connection, public std::enable_shared_from_this<Session<kTls>> {
  using Stream = std::conditional_t<kTls, net::ssl::stream<tcp::socket>, tcp::socket>;

 public:
  Session(Shared& shared, tcp::socket socket, std::string client, std::uint64_t id)
      : shared_(shared),
        stream_(make_stream(std::move(socket), shared)),
        timer_(stream_.get_executor()),
        buffer_(shared.options.max_head + 65536),
        client_(std::move(client)),
        id_(id) {}
  ~Session() override { shared_.registry.remove(id_); }

  /// Serves the connection; with `refusal` (429, 503), answers it that and closes (without
  /// lingering: a flood of refused connections must not hold descriptors).
  void start(int refusal = 0, const std::string& reason = "", const std::string& message = "") {
    if (refusal) {
      shared_.handler.refused(reason, refusal);
      Response r = error_response(refusal, message);
      r.headers.push_back({"Retry-After", "1"});
      r.close = true;
      refused_ = true;
      return write(std::move(r), false);
    }
    if constexpr (kTls) {
      set_phase(Phase::kHandshake);
      arm(Clock::now() + shared_.options.request_read);
      stream_.async_handshake(net::ssl::stream_base::server, [self = this->shared_from_this()](const error_code& ec) {
        if (ec) return self->close();
        self->idle();
      });
    } else {
      idle();
    }
  }

  void abort() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->close(); });
  }

  void stop_if_quiet() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (self->phase_ != Phase::kBusy && self->phase_ != Phase::kWriting) self->close();
    });
  }

 private:
  static Stream make_stream(tcp::socket socket, Shared& shared) {
    if constexpr (kTls)
      return Stream(std::move(socket), *shared.tls);
    else
      return socket;
  }
  tcp::socket& socket() {
    if constexpr (kTls)
      return stream_.next_layer();
    else
      return stream_;
  }

  void set_phase(Phase p) {
    phase_ = p;
    shared_.registry.phase(id_, p, Clock::now());
  }

  /// The deadline of the current phase; expired() decides what missing it means.
  void arm(Clock::time_point deadline) {
    const std::uint64_t generation = ++generation_;
    timer_.expires_at(deadline);
    timer_.async_wait([self = this->shared_from_this(), generation](const error_code& ec) {
      if (!ec && generation == self->generation_) self->expired();
    });
  }
  void disarm() {
    ++generation_;
    timer_.cancel();
  }
  void expired() {
    if (phase_ == Phase::kReading) {  // on_read answers 408 once the read is cancelled
      timed_out_ = true;
      error_code ignored;
      socket().cancel(ignored);
    } else {
      close();  // a handshake, an idle connection, a response nobody reads, a lingering close
    }
  }

  // ---- Reading a request ----

  void idle() {
    if (shared_.stopping) return close();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(shared_.options.max_head));
    parser_->body_limit(static_cast<std::uint64_t>(shared_.options.max_body));
    parser_->eager(false);  // control returns after the head, to judge it before the body
    head_checked_ = fold_checked_ = timed_out_ = head_request_ = false;
    if (buffer_.size() > 0) {  // a pipelined request
      begin_request();
      return parse();
    }
    set_phase(Phase::kIdle);
    arm(Clock::now() + shared_.options.keep_alive);
    read();
  }

  void begin_request() {
    set_phase(Phase::kReading);
    arm(Clock::now() + shared_.options.request_read);
  }

  void read() {
    const std::size_t room = buffer_.max_size() - buffer_.size();
    stream_.async_read_some(buffer_.prepare(std::min<std::size_t>(room, 65536)),
                            [self = this->shared_from_this()](const error_code& ec, std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(const error_code& ec, std::size_t n) {
    if (timed_out_) {
      return refuse(
          408, "read_timeout",
          "the request did not arrive whole within --client-timeout-ms (" + std::to_string(shared_.options.request_read.count()) + " ms)");
    }
    if (ec) return close();  // the client left (or was evicted)
    buffer_.commit(n);
    if (phase_ == Phase::kIdle) begin_request();
    parse();
  }

  std::string_view buffered() const {
    const auto data = buffer_.data();
    return {static_cast<const char*>(data.data()), data.size()};
  }

  void parse() {
    for (;;) {
      if (!parser_->is_header_done()) {
        const std::size_t end = buffered().find("\r\n\r\n");
        if (end == std::string_view::npos) {
          if (buffer_.size() > shared_.options.max_head)
            return refuse(431, "head_too_large",
                          "the request line and headers are over " + std::to_string(shared_.options.max_head) + " bytes");
          return read();
        }
        if (!fold_checked_) {
          fold_checked_ = true;
          if (folded(buffered().substr(0, end + 2)))
            return refuse(400, "framing", "a header line is folded onto the next (obs-fold); send each field on one line");
        }
      } else if (buffer_.size() == 0) {
        return read();
      }
      error_code ec;
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == bhttp::error::need_more) {
        if (buffer_.size() == buffer_.max_size())
          return refuse(431, "head_too_large",
                        "a chunk header or the trailers are over " + std::to_string(shared_.options.max_head) + " bytes");
        return read();
      }
      if (ec == bhttp::error::header_limit)
        return refuse(431, "head_too_large",
                      "the request line and headers are over " + std::to_string(shared_.options.max_head) + " bytes");
      if (ec == bhttp::error::body_limit)
        return refuse(413, "body_too_large", "the body is over --max-body-bytes (" + std::to_string(shared_.options.max_body) + " bytes)");
      if (ec) return refuse(400, "framing", "malformed request: " + ec.message());
      if (parser_->is_header_done() && !head_checked_) {
        head_checked_ = true;
        if (!judge_head()) return;
        parser_->eager(true);
        if (continue_) return send_continue();
      }
      if (parser_->is_done()) return dispatch();
    }
  }

  /// The head's framing and the handler's verdict: false when the request was refused.
  bool judge_head() {
    const auto bad = [this](int status, const std::string& reason, const std::string& message) {
      refuse(status, reason, message);
      return false;
    };
    const auto& req = parser_->get();
    version_ = req.version() == 10 ? 10 : 11;
    head_ = Head{};
    head_.method = std::string(req.method_string());
    head_.target = std::string(req.target());
    head_.version = version_;
    head_.client = client_;
    head_.started = Clock::now();
    const std::size_t question = head_.target.find('?');
    head_.path = head_.target.substr(0, question);
    if (question != std::string::npos) head_.query = head_.target.substr(question + 1);
    for (const auto& f : req) head_.fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
    head_request_ = head_.method == "HEAD";
    const auto length = parser_->content_length();  // (a boost::optional)
    const Framing framing{req.version(), parser_->chunked(), length ? std::optional<std::uint64_t>(*length) : std::nullopt};
    head_.has_body = framing.chunked || (framing.length && *framing.length > 0);
    if (const auto refusal = framing_refusal(head_, framing)) return bad(refusal->status, refusal->reason, refusal->message);
    continue_ = head_.has_body && head_.field("expect");  // (framing_refusal took only 100-continue)
    std::optional<Response> refusal;
    try {
      refusal = shared_.handler.accept(head_);
    } catch (const std::exception& e) {
      refusal = error_response(500, e.what());
    }
    if (refusal) {
      if (head_.has_body) refusal->close = true;  // the body was not read: nothing after it can be framed
      write(std::move(*refusal), parser_->keep_alive());
      return false;
    }
    return true;
  }

  void send_continue() {
    static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    continue_ = false;
    net::async_write(stream_, net::buffer(kContinue, sizeof kContinue - 1),
                     [self = this->shared_from_this()](const error_code& ec, std::size_t) {
                       if (ec) return self->on_read(ec, 0);
                       self->parse();
                     });
  }

  void dispatch() {
    set_phase(Phase::kBusy);
    disarm();
    keep_ = parser_->keep_alive();
    Request request{std::move(head_), std::move(parser_->get().body())};
    // The answer holds the connection until it is given (a handler that keeps its copy keeps nothing
    // alive after that; one that drops it unanswered closes the connection).
    struct Pending {
      std::mutex mutex;
      std::shared_ptr<Session> session;
    };
    auto pending = std::make_shared<Pending>();
    pending->session = this->shared_from_this();
    Respond respond = [pending](Response r) {
      std::shared_ptr<Session> self;
      {
        std::lock_guard<std::mutex> lock(pending->mutex);
        self = std::move(pending->session);
      }
      if (!self) return;  // answered already
      net::post(self->stream_.get_executor(), [self, r = std::move(r)]() mutable { self->write(std::move(r), self->keep_); });
    };
    try {
      shared_.handler.handle(std::move(request), respond);
    } catch (const std::exception& e) {
      respond(error_response(500, e.what()));
    }
  }

  // ---- Answering ----

  /// Answers `r` and then reads the next request (`keep`), or closes.
  void write(Response r, bool keep) {
    keep = keep && !r.close && !shared_.stopping && served_ + 1 < shared_.options.keep_alive_max;
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>();
    res->version(version_);
    res->result(static_cast<unsigned>(r.status));
    res->set(bhttp::field::content_type, r.content_type);
    res->set("X-Content-Type-Options", "nosniff");
    for (const auto& [name, value] : r.headers) res->set(name, value);
    res->keep_alive(keep);
    if (keep)
      res->set("Keep-Alive", "timeout=" + std::to_string(std::max<long long>(1, shared_.options.keep_alive.count() / 1000)) +
                                 ", max=" + std::to_string(shared_.options.keep_alive_max - served_ - 1));
    res->body() = std::move(r.body);
    res->prepare_payload();
    if (head_request_) res->body().clear();  // (Content-Length stays: the GET's)
    set_phase(Phase::kWriting);
    arm(Clock::now() + shared_.options.write_timeout);
    bhttp::async_write(stream_, *res, [self = this->shared_from_this(), res, keep](const error_code& ec, std::size_t) {
      if (ec) return self->close();
      ++self->served_;
      if (keep) return self->idle();
      self->linger();
    });
  }

  /// An error the connection layer answers itself, then closes.
  void refuse(int status, const std::string& reason, const std::string& message) {
    shared_.handler.refused(reason, status);
    Response r = error_response(status, message);
    r.close = true;
    write(std::move(r), false);
  }

  /// Closes after a final answer (lingering close): reads and drops what the client still sends, at
  /// most options.linger_bytes for at most options.linger, so a client that sends its whole body
  /// before reading (most client libraries) reads its answer rather than a reset. Plain TCP sends
  /// its FIN first (the client sees the answer end); TLS sends close_notify at once after a request
  /// read whole, and after draining one cut short (records after a close_notify would be an error).
  void linger() {
    set_phase(Phase::kClosing);
    if (shared_.stopping || refused_) {
      error_code ignored;
      if constexpr (!kTls) socket().shutdown(tcp::socket::shutdown_send, ignored);
      return close();
    }
    arm(Clock::now() + shared_.options.linger);  // expired() closes
    if constexpr (kTls) {
      if (!parser_ || parser_->is_done())  // nothing more is coming
        return stream_.async_shutdown([self = this->shared_from_this()](const error_code&) { self->close(); });
    } else {
      error_code ignored;
      socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
    buffer_.clear();
    drain();
  }
  void drain() {
    stream_.async_read_some(buffer_.prepare(16384), [self = this->shared_from_this()](const error_code& ec, std::size_t n) {
      self->drained_ += n;
      if (!ec && self->drained_ <= self->shared_.options.linger_bytes) return self->drain();
      if constexpr (kTls) {
        if (!self->closed_ && ec != net::error::operation_aborted) {  // the client stopped sending (or sent too much): close_notify
          self->arm(Clock::now() + std::chrono::milliseconds(500));   // (replaces the linger deadline)
          return self->stream_.async_shutdown([self](const error_code&) { self->close(); });
        }
      }
      self->close();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    disarm();
    error_code ignored;
    socket().shutdown(tcp::socket::shutdown_both, ignored);
    socket().close(ignored);
  }

  Shared& shared_;
  Stream stream_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  Head head_;
  const std::string client_;
  const std::uint64_t id_;
  Phase phase_ = Phase::kIdle;
  std::uint64_t generation_ = 0;
  std::size_t served_ = 0, drained_ = 0;
  int version_ = 11;
  bool head_checked_ = false, fold_checked_ = false, timed_out_ = false, continue_ = false, keep_ = false, head_request_ = false;
  bool closed_ = false, refused_ = false;
};

}  // namespace

// ---- Public helpers ----

std::optional<std::string> Head::field(std::string_view name) const {
  for (const auto& [n, v] : fields)
    if (beast::iequals(n, name)) return v;
  return std::nullopt;
}

Response error_response(int status, const std::string& message) {
  const nlohmann::ordered_json body = {{"error", {{"status", status}, {"message", message}}}};
  Response r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return r;
}

bool is_loopback(const std::string& host) {
  if (beast::iequals(host, "localhost")) return true;
  std::string literal = host;
  if (literal.size() > 2 && literal.front() == '[' && literal.back() == ']') literal = literal.substr(1, literal.size() - 2);
  error_code ec;
  const net::ip::address a = net::ip::make_address(literal, ec);
  if (ec) return false;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

std::vector<std::string> local_names() {
  std::vector<std::string> names;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
      char text[NI_MAXHOST];
      const socklen_t size = i->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      if (::getnameinfo(i->ifa_addr, size, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0) {
        std::string name = text;
        name = name.substr(0, name.find('%'));  // fe80::1%eth0
        names.push_back(name);
      }
    }
    ::freeifaddrs(list);
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0]) names.emplace_back(host);
  return names;
}

// ---- The server ----

struct HttpServer::Impl {
  Impl(const HttpOptions& o, HttpHandler& h) : shared{o, h, nullptr, ConnectionRegistry(o.max_connections, o.per_client)} {}

  void accept() {
    acceptor.async_accept(net::make_strand(io), [this](const error_code& ec, tcp::socket socket) { on_accept(ec, std::move(socket)); });
  }

  void on_accept(const error_code& ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || shared.stopping) return;
    if (ec) {  // out of descriptors, say: try again shortly rather than spin
      retry.expires_after(std::chrono::milliseconds(50));
      retry.async_wait([this](const error_code& e) {
        if (!e) accept();
      });
      return;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    const auto peer = socket.remote_endpoint(ignored);
    const std::string client = address_text(peer.address());
    const ConnectionRegistry::Admitted a = shared.registry.admit(client, Clock::now());
    if (a.evicted) a.evicted->abort();
    if (shared.tls) {
      auto s = std::make_shared<Session<true>>(shared, std::move(socket), client, a.id);
      shared.registry.attach(a.id, s);
      if (a.admission == ConnectionRegistry::Admission::kAdmitted) {
        s->start();
      } else {
        shared.handler.refused(a.admission == ConnectionRegistry::Admission::kPerClient ? "per_client" : "saturated",
                               a.admission == ConnectionRegistry::Admission::kPerClient ? 429 : 503);
        s->abort();  // no HTTP before the handshake: closed
      }
    } else {
      auto s = std::make_shared<Session<false>>(shared, std::move(socket), client, a.id);
      shared.registry.attach(a.id, s);
      if (a.admission == ConnectionRegistry::Admission::kPerClient)
        s->start(429, "per_client",
                 "this address has " + std::to_string(shared.options.per_client) + " connections open (--connections-per-client)");
      else if (a.admission == ConnectionRegistry::Admission::kSaturated)
        s->start(503, "saturated",
                 "the server has --max-connections (" + std::to_string(shared.options.max_connections) +
                     ") connections open, each running a request");
      else
        s->start();
    }
    accept();
  }

  Shared shared;
  std::unique_ptr<net::ssl::context> tls;
  net::io_context io{std::max(1, shared.options.threads)};
  tcp::acceptor acceptor{net::make_strand(io)};
  net::steady_timer retry{acceptor.get_executor()};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  bool started = false, stopped = false;
};

HttpServer::HttpServer(const HttpOptions& options, HttpHandler& handler) : impl_(std::make_unique<Impl>(options, handler)) {}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  const HttpOptions& o = impl_->shared.options;
  if (!o.tls_cert.empty() || !o.tls_key.empty()) {
    impl_->tls = tls_context(o.tls_cert, o.tls_key);
    impl_->shared.tls = impl_->tls.get();
  }
  error_code ec;
  tcp::resolver resolver(impl_->io);
  const auto endpoints = resolver.resolve(o.host, std::to_string(o.port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) throw std::runtime_error("--host " + o.host + ": cannot resolve it (" + ec.message() + ")");
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor& a = impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  return a.local_endpoint().port();
}

void HttpServer::start() {
  impl_->started = true;
  impl_->work.emplace(net::make_work_guard(impl_->io));
  impl_->accept();
  for (int i = 0; i < std::max(1, impl_->shared.options.threads); ++i) impl_->threads.emplace_back([this] { impl_->io.run(); });
}

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->shared.stopping = true;
  if (!impl_->started) return;
  std::promise<void> closed;
  net::post(impl_->acceptor.get_executor(), [this, &closed] {
    error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->retry.cancel();
    closed.set_value();
  });
  closed.get_future().wait();
  for (const auto& c : impl_->shared.registry.all()) c->stop_if_quiet();
  impl_->shared.registry.wait_empty();
  impl_->work.reset();
  impl_->io.stop();
  for (std::thread& t : impl_->threads) t.join();
}

std::size_t HttpServer::open_connections() const { return impl_->shared.registry.size(); }

bool HttpServer::tls() const { return impl_->tls != nullptr; }

}  // namespace attn::server
