#include "server/http_gate.h"

#include <fcntl.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/http_head.h"

namespace colltune {
namespace {

using Clock = std::chrono::steady_clock;

// ---- transports: plain TCP or TLS, both non-blocking ----

enum class Io { ok, want_read, want_write, closed, error };

class Transport {
 public:
  virtual ~Transport() = default;
  // Advances the handshake; ok once data can flow.
  virtual Io handshake() = 0;
  // > 0: bytes moved; otherwise 0 and `io` says why.
  virtual std::size_t recv(char* p, std::size_t n, Io& io) = 0;
  virtual std::size_t send(const char* p, std::size_t n, Io& io) = 0;
  // Bytes already decrypted and buffered below us (TLS), invisible to poll().
  virtual bool pending() const { return false; }
};

class PlainTransport : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  Io handshake() override { return Io::ok; }
  std::size_t recv(char* p, std::size_t n, Io& io) override {
    const ssize_t r = ::recv(fd_, p, n, MSG_DONTWAIT);
    if (r > 0) return static_cast<std::size_t>(r);
    io = r == 0                                      ? Io::closed
         : (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::want_read
         : errno == EINTR                            ? Io::want_read
                                                     : Io::error;
    return 0;
  }
  std::size_t send(const char* p, std::size_t n, Io& io) override {
    const ssize_t r = ::send(fd_, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r > 0) return static_cast<std::size_t>(r);
    io = (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) ? Io::want_write
                                                                                : Io::error;
    return 0;
  }

 private:
  int fd_;
};

class TlsTransport : public Transport {
 public:
  TlsTransport(SSL_CTX* ctx, int fd) : ssl_(SSL_new(ctx)) {
    if (ssl_) SSL_set_fd(ssl_, fd);
  }
  ~TlsTransport() override {
    if (!ssl_) return;
    if (established_) SSL_shutdown(ssl_);  // best effort close_notify; never waits
    SSL_free(ssl_);
  }
  Io handshake() override {
    if (!ssl_) return Io::error;
    ERR_clear_error();
    const int r = SSL_accept(ssl_);
    if (r == 1) {
      established_ = true;
      return Io::ok;
    }
    return classify(r);
  }
  std::size_t recv(char* p, std::size_t n, Io& io) override {
    ERR_clear_error();
    const int r = SSL_read(ssl_, p, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
    if (r > 0) return static_cast<std::size_t>(r);
    io = classify(r);
    return 0;
  }
  std::size_t send(const char* p, std::size_t n, Io& io) override {
    ERR_clear_error();
    const int r = SSL_write(ssl_, p, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
    if (r > 0) return static_cast<std::size_t>(r);
    io = classify(r);
    return 0;
  }
  bool pending() const override { return SSL_pending(ssl_) > 0; }

 private:
  Io classify(int r) {
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ:
        return Io::want_read;
      case SSL_ERROR_WANT_WRITE:
        return Io::want_write;
      case SSL_ERROR_ZERO_RETURN:
        return Io::closed;
      default:
        established_ = false;  // no close_notify on a broken session
        return Io::error;
    }
  }
  SSL* ssl_;
  bool established_ = false;
};

// Waits until `fd` is ready for `events` or `timeout` passes. False on timeout or error.
bool wait_for(int fd, short events, Clock::duration timeout) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  if (ms <= 0) return false;
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(ms, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

void address_of(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = "";
  char serv[NI_MAXSERV] = "";
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, serv,
                    sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

// Calls cpp-httplib's request processing (a protected member) on a stream of our own.
class RequestRunner : public httplib::Server {
 public:
  static bool run(httplib::Server& server, httplib::Stream& strm, bool close_connection,
                  bool& connection_closed) {
    return (server.*(&RequestRunner::process_request))(strm, close_connection, connection_closed,
                                                       nullptr);
  }
  // httplib ends streamed (chunked) answers as soon as its listening socket is invalid, its
  // sign of shutting down; the gate's socket stands in for it while the gate runs.
  static void set_listening(httplib::Server& server, socket_t fd) {
    server.*(&RequestRunner::svr_sock_) = fd;
  }
};

std::string gate_answer(int status, const std::string& message) {
  const char* code = status == 408   ? "timeout"
                     : status == 503 ? "unavailable"
                     : status == 431 ? "request_too_large"
                                     : "bad_request";
  const std::string body =
      nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump() + "\n";
  const char* reason = status == 408   ? "Request Timeout"
                       : status == 503 ? "Service Unavailable"
                       : status == 431 ? "Request Header Fields Too Large"
                       : status == 505 ? "HTTP Version Not Supported"
                                       : "Bad Request";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

// ---- a connection and the stream a worker reads it through ----

struct Connection {
  int fd = -1;
  std::string ip;
  int port = 0;
  std::string local_ip;
  int local_port = 0;
  std::unique_ptr<Transport> transport;
  std::string in;  // received bytes; those before `pos` are consumed
  std::size_t pos = 0;
  // handshake, head: waits in the gate (polled). queued: with a worker or waiting for one; the
  // gate thread alone writes `phase` (it reads it while a worker holds the connection).
  enum class Phase { handshake, head, queued } phase = Phase::head;
  bool want_write = false;  // TLS: the handshake or a read waits for POLLOUT
  bool idle = false;        // between requests (keep-alive): idle_timeout applies
  bool close = false;       // set by a worker: close instead of waiting for another request
  Clock::time_point deadline;
  bool large = false;  // its body is read by the worker (see Impl::large_waiting)

  ~Connection() {
    transport.reset();
    if (fd >= 0) ::close(fd);
  }

  std::size_t available() const { return in.size() - pos; }
  void compact() {
    in.erase(0, pos);
    pos = 0;
  }

  // Reads what is available now (non-blocking) into `in`. False when the peer closed or failed.
  bool fill(std::size_t limit) {
    char buf[16 * 1024];
    for (;;) {
      if (available() >= limit) return true;
      Io io = Io::ok;
      const std::size_t n = transport->recv(buf, sizeof buf, io);
      if (n > 0) {
        in.append(buf, n);
        continue;
      }
      want_write = io == Io::want_write;
      return io == Io::want_read || io == Io::want_write;
    }
  }

  // Best-effort answer before closing (never blocks).
  void answer_and_close(const std::string& bytes) {
    Io io = Io::ok;
    transport->send(bytes.data(), bytes.size(), io);
    close = true;
  }
};

namespace {

class GateStream : public httplib::Stream {
 public:
  GateStream(Connection& c, std::chrono::milliseconds io_timeout,
             std::chrono::milliseconds request_timeout, const std::atomic<bool>& stopping)
      : c_(c),
        io_timeout_(io_timeout),
        body_deadline_(Clock::now() + request_timeout),
        stopping_(stopping) {}

  bool is_readable() const override {
    return c_.available() > 0 || c_.transport->pending() || wait_for(c_.fd, POLLIN, io_timeout_);
  }
  bool is_writable() const override {
    if (!wait_for(c_.fd, POLLOUT, io_timeout_)) return false;
    // A peer that closed its end (an SSE client gone) is not worth writing to.
    pollfd p{c_.fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) {
      if (p.revents & (POLLHUP | POLLERR)) return false;
      char byte;
      if (::recv(c_.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) return false;
    }
    return true;
  }
  ssize_t read(char* ptr, std::size_t size) override {
    const auto give_up = std::min(Clock::now() + io_timeout_, body_deadline_);
    while (c_.available() == 0) {
      char buf[16 * 1024];
      Io io = Io::ok;
      const std::size_t n = c_.transport->recv(buf, sizeof buf, io);
      if (n > 0) {
        c_.in.append(buf, n);
        break;
      }
      if (io == Io::closed) return 0;
      if (io == Io::error || stopping_) return -1;
      // Waits in slices so that stop() is not held up by a slow body.
      const auto left = give_up - Clock::now();
      if (left <= Clock::duration::zero()) return -1;
      wait_for(c_.fd, io == Io::want_write ? POLLOUT : POLLIN,
               std::min<Clock::duration>(left, std::chrono::milliseconds(250)));
    }
    const std::size_t n = std::min(size, c_.available());
    std::memcpy(ptr, c_.in.data() + c_.pos, n);
    c_.pos += n;
    if (c_.pos == c_.in.size()) {
      c_.in.clear();
      c_.pos = 0;
    }
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, std::size_t size) override {
    std::size_t done = 0;
    while (done < size) {
      Io io = Io::ok;
      const std::size_t n = c_.transport->send(ptr + done, size - done, io);
      if (n > 0) {
        done += n;
        continue;
      }
      if (io == Io::error || io == Io::closed) return -1;
      if (!wait_for(c_.fd, io == Io::want_read ? POLLIN : POLLOUT, io_timeout_)) return -1;
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.ip;
    port = c_.port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.local_ip;
    port = c_.local_port;
  }
  socket_t socket() const override { return c_.fd; }

 private:
  Connection& c_;
  std::chrono::milliseconds io_timeout_;
  Clock::time_point body_deadline_;
  const std::atomic<bool>& stopping_;
};

}  // namespace

// ---- the gate ----

struct HttpGate::Impl {
  httplib::Server& server;
  HttpGateOptions options;
  SSL_CTX* tls = nullptr;
  int listen_fd = -1;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::thread gate_thread;
  std::vector<std::thread> workers;

  // Owned by the gate thread (and by stop() once every thread is joined).
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections;
  std::map<std::string, int> per_client;

  std::mutex mutex;  // guards queue, returned, stats_
  std::condition_variable queue_cv;
  std::deque<Connection*> queue;
  std::vector<Connection*> returned;
  // Requests whose body the worker reads (over kGateBodyBytes, or chunked): a slow sender
  // holds its worker, so at most max_large of them run at once; the others wait here.
  int large_running = 0;  // gate thread only
  Clock::time_point accept_paused_until{};
  int max_large = 1;
  std::deque<Connection*> large_waiting;
  HttpGateStats stats_;
  std::atomic<int> open{0};

  Impl(httplib::Server& s, HttpGateOptions o) : server(s), options(std::move(o)) {}

  ~Impl() {
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_fd >= 0) ::close(wake_fd);
    if (tls) SSL_CTX_free(tls);
  }

  void count(std::uint64_t HttpGateStats::*field) {
    std::lock_guard<std::mutex> lock(mutex);
    ++(stats_.*field);
  }

  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto r = ::write(wake_fd, &one, sizeof one);
  }

  void load_tls() {
    tls = SSL_CTX_new(TLS_server_method());
    if (!tls) throw std::runtime_error("cannot create a TLS context");
    SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION);
    SSL_CTX_set_mode(tls, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_use_certificate_chain_file(tls, options.tls_cert.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls, options.tls_key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(tls) != 1)
      throw std::runtime_error("cannot load TLS certificate " + options.tls_cert + " / key " +
                               options.tls_key);
  }

  int bind(const std::string& host, int port) {
    if (!options.tls_cert.empty()) load_tls();
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* result = nullptr;
    const std::string service = std::to_string(port);
    if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &result) != 0)
      throw std::runtime_error("cannot resolve " + host);
    std::string error = "no address";
    for (addrinfo* a = result; a && listen_fd < 0; a = a->ai_next) {
      const int fd =
          ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) continue;
      // SO_REUSEADDR only: SO_REUSEPORT would let a second daemon share the port.
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
        listen_fd = fd;
      } else {
        error = std::strerror(errno);
        ::close(fd);
      }
    }
    ::freeaddrinfo(result);
    if (listen_fd < 0)
      throw std::runtime_error("cannot listen on " + host + ":" + service + " (" + error + ")");
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
    std::string ip;
    int bound = 0;
    address_of(addr, len, ip, bound);
    // Never more connections than descriptors: keep 128 for the store, jobs and logs.
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      options.max_connections = std::max(
          16, std::min<int>(options.max_connections, static_cast<int>(limit.rlim_cur) - 128));
    return bound;
  }

  void start() {
    max_large = std::max(1, options.workers / 4);
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw std::runtime_error("eventfd failed");
    RequestRunner::set_listening(server, listen_fd);
    for (int i = 0; i < options.workers; ++i) workers.emplace_back([this] { work(); });
    gate_thread = std::thread([this] { run_gate(); });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);  // no worker misses the wake-up
      stopping = true;
    }
    RequestRunner::set_listening(server, INVALID_SOCKET);  // event streams end
    if (wake_fd >= 0) wake();
    queue_cv.notify_all();
    if (gate_thread.joinable()) gate_thread.join();
    for (auto& w : workers)
      if (w.joinable()) w.join();
    workers.clear();
    connections.clear();
    per_client.clear();
  }

  // -- gate thread --

  void accept_all() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        // Out of descriptors: leave the rest in the kernel's queue for a moment instead of
        // spinning on a listening socket that stays readable.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
        return;
      }
      auto c = std::make_unique<Connection>();
      c->fd = fd;
      address_of(addr, len, c->ip, c->port);
      sockaddr_storage local{};
      socklen_t local_len = sizeof local;
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0)
        address_of(local, local_len, c->local_ip, c->local_port);
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      c->deadline = Clock::now() + options.header_timeout;
      const bool busy = static_cast<int>(connections.size()) >= options.max_connections ||
                        per_client[c->ip] >= options.max_connections_per_client;
      if (busy) {
        count(&HttpGateStats::refused_busy);
        if (!tls) {
          const std::string answer =
              gate_answer(503, "too many connections (from this client or in all); retry later");
          [[maybe_unused]] auto r =
              ::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        }
        if (per_client[c->ip] == 0) per_client.erase(c->ip);
        continue;  // ~Connection closes it
      }
      count(&HttpGateStats::accepted);
      ++per_client[c->ip];
      ++open;
      if (tls) {
        c->transport = std::make_unique<TlsTransport>(tls, fd);
        c->phase = Connection::Phase::handshake;
      } else {
        c->transport = std::make_unique<PlainTransport>(fd);
      }
      Connection* raw = c.get();
      connections.emplace(raw, std::move(c));
    }
  }

  void close_connection(Connection* c) {
    if (auto it = per_client.find(c->ip); it != per_client.end() && --it->second <= 0)
      per_client.erase(it);
    connections.erase(c);
    --open;
  }

  // The connection has bytes (or a handshake step) to process. Closes, queues or keeps it.
  void advance(Connection* c) {
    if (c->phase == Connection::Phase::handshake) {
      const Io io = c->transport->handshake();
      if (io == Io::ok) {
        c->phase = Connection::Phase::head;
        c->want_write = false;
      } else if (io == Io::want_read || io == Io::want_write) {
        c->want_write = io == Io::want_write;
        return;
      } else {
        close_connection(c);
        return;
      }
    }
    const std::size_t before = c->available();
    const bool alive = c->fill(options.max_head_bytes + kGateBodyBytes + 1);
    if (c->idle && c->available() > before) {
      // The next request has begun: from now on its head has header_timeout to arrive.
      c->idle = false;
      c->deadline = Clock::now() + options.header_timeout;
    }
    if (!check_ready(c) && !alive) close_connection(c);
  }

  enum class Head { incomplete, ready, large, refused };

  // Looks at the next request in `c`'s buffer: its head (checked and, for a body-less POST,
  // completed) and a small body complete -> ready; a body the worker must read -> large;
  // refused -> answered, c->close set. Touches only `c` (and the counters): the gate thread
  // calls it, and so does the worker that holds `c`.
  Head take_head(Connection* c) {
    c->compact();
    // Empty lines before a request are ignored (RFC 9112 2.2).
    std::size_t skip = 0;
    while (c->in.compare(skip, 2, "\r\n") == 0) skip += 2;
    if (skip) c->in.erase(0, skip);
    const auto head_length = request_head_length(c->in);
    if (!head_length) {
      if (c->in.size() <= options.max_head_bytes) return Head::incomplete;
      count(&HttpGateStats::bad_heads);
      c->answer_and_close(gate_answer(
          431, "request head larger than " + std::to_string(options.max_head_bytes) + " bytes"));
      return Head::refused;
    }
    HeadVerdict verdict = inspect_request_head(std::string_view(c->in).substr(0, *head_length));
    if (verdict.status != 0) {
      count(&HttpGateStats::bad_heads);
      c->answer_and_close(gate_answer(verdict.status, verdict.message));
      return Head::refused;
    }
    // A small body is read here too, so that a slow sender holds no worker.
    // (Not when the client waits for "100 Continue" before sending it.)
    const std::size_t body_here =
        verdict.content_length <= kGateBodyBytes && !verdict.expects_continue
            ? verdict.content_length
            : 0;
    if (c->in.size() < *head_length + body_here) return Head::incomplete;
    c->in.replace(0, *head_length, verdict.head);
    return verdict.chunked || verdict.content_length > body_here ? Head::large : Head::ready;
  }

  // Gate thread. True when `c` was queued or answered (and closed); false when it still waits.
  bool check_ready(Connection* c) {
    const Head head = take_head(c);
    if (head == Head::incomplete) return false;
    if (head == Head::refused) {
      close_connection(c);
      return true;
    }
    c->phase = Connection::Phase::queued;
    c->idle = false;
    c->large = head == Head::large;
    if (c->large && large_running >= max_large) {
      large_waiting.push_back(c);
      return true;
    }
    dispatch(c);
    return true;
  }

  void dispatch(Connection* c) {
    if (c->large) ++large_running;
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(c);
      ++stats_.requests;
    }
    queue_cv.notify_one();
  }

  void take_returned() {
    std::vector<Connection*> back;
    {
      std::lock_guard<std::mutex> lock(mutex);
      back.swap(returned);
    }
    for (Connection* c : back) {
      if (c->large) {
        c->large = false;
        --large_running;
        if (!large_waiting.empty() && !stopping) {
          Connection* next = large_waiting.front();
          large_waiting.pop_front();
          dispatch(next);
        }
      }
      if (c->close || stopping) {
        close_connection(c);
        continue;
      }
      c->phase = Connection::Phase::head;
      c->idle = c->available() == 0;
      c->deadline = Clock::now() + (c->idle ? options.idle_timeout : options.header_timeout);
      // Bytes decrypted but not yet read (TLS) are invisible to poll(): read them now.
      if (c->transport->pending() && !c->fill(options.max_head_bytes + kGateBodyBytes + 1)) {
        close_connection(c);
        continue;
      }
      check_ready(c);
    }
  }

  void expire(Clock::time_point now) {
    std::vector<Connection*> late;
    for (auto& [raw, c] : connections)
      if ((c->phase == Connection::Phase::head || c->phase == Connection::Phase::handshake) &&
          c->deadline <= now)
        late.push_back(raw);
    for (Connection* c : late) {
      if (!c->idle) {
        count(&HttpGateStats::head_timeouts);
        if (c->phase == Connection::Phase::head)
          c->answer_and_close(gate_answer(408, "request head not complete within " +
                                                   std::to_string(options.header_timeout.count()) +
                                                   " ms"));
      }
      close_connection(c);
    }
  }

  void run_gate() {
    std::vector<pollfd> fds;
    std::vector<Connection*> polled;
    while (!stopping) {
      const auto now = Clock::now();
      expire(now);
      fds.clear();
      polled.clear();
      fds.push_back({wake_fd, POLLIN, 0});
      const bool accepting = now >= accept_paused_until;
      fds.push_back({accepting ? listen_fd : -1, POLLIN, 0});  // poll() skips a negative fd
      Clock::time_point next = now + std::chrono::seconds(1);
      if (!accepting) next = std::min(next, accept_paused_until);
      for (auto& [raw, c] : connections) {
        if (c->phase != Connection::Phase::head && c->phase != Connection::Phase::handshake)
          continue;
        fds.push_back({c->fd, static_cast<short>(c->want_write ? POLLOUT : POLLIN), 0});
        polled.push_back(raw);
        next = std::min(next, c->deadline);
      }
      const auto wait_ms = std::max<long long>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1);
      const int r = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
      if (r < 0 && errno != EINTR) {
        spdlog::error("http gate: poll failed: {}", std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (r <= 0) continue;
      if (fds[0].revents) {
        std::uint64_t n;
        [[maybe_unused]] auto ignored = ::read(wake_fd, &n, sizeof n);
        take_returned();
      }
      for (std::size_t i = 2; i < fds.size(); ++i)
        if (fds[i].revents) advance(polled[i - 2]);
      if (fds[1].revents) accept_all();
    }
    // Stopping: close what waits here; workers give back the rest.
    std::vector<Connection*> waiting;
    for (auto& [raw, c] : connections)
      if (c->phase == Connection::Phase::head || c->phase == Connection::Phase::handshake)
        waiting.push_back(raw);
    for (Connection* c : waiting) close_connection(c);
  }

  // -- workers --

  // Runs the request the gate queued, then, on a keep-alive connection, the requests that
  // follow it at once (pipelined, or sent within kNextRequestWait of the answer): handing
  // each one back through the gate would cost two thread switches per request. Anything else
  // (an incomplete head, a large body, silence) goes back to the gate.
  void serve(Connection* c) {
    constexpr auto kNextRequestWait = std::chrono::milliseconds(2);
    constexpr int kMaxInARow = 100;
    for (int n = 0;; ++n) {
      GateStream stream(*c, options.io_timeout, options.request_timeout, stopping);
      bool closed = false;
      bool ok = false;
      try {
        ok = RequestRunner::run(server, stream, false, closed);
      } catch (const std::exception& e) {
        spdlog::error("http gate: request failed: {}", e.what());
      }
      c->close = !ok || closed;
      if (c->close || stopping || c->large || n + 1 >= kMaxInARow) return;
      if (c->available() == 0 && !c->transport->pending() &&
          !wait_for(c->fd, POLLIN, kNextRequestWait))
        return;
      const bool alive = c->fill(options.max_head_bytes + kGateBodyBytes + 1);
      const Head head = take_head(c);
      if (head == Head::refused) return;  // answered; c->close is set
      if (head != Head::ready) {
        if (!alive) c->close = true;
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++stats_.requests;
      }
    }
  }

  void work() {
    for (;;) {
      Connection* c = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex);
        queue_cv.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty()) return;  // stopping
        c = queue.front();
        queue.pop_front();
      }
      if (stopping) {
        c->close = true;
      } else {
        serve(c);
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        returned.push_back(c);
      }
      wake();
    }
  }
};

HttpGate::HttpGate(httplib::Server& server, HttpGateOptions options)
    : impl_(std::make_unique<Impl>(server, std::move(options))) {}

HttpGate::~HttpGate() { stop(); }

int HttpGate::bind(const std::string& host, int port) { return impl_->bind(host, port); }

void HttpGate::start() { impl_->start(); }

void HttpGate::stop() {
  if (impl_) impl_->stop();
}

HttpGateStats HttpGate::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  HttpGateStats s = impl_->stats_;
  s.open = impl_->open.load();
  return s;
}

}  // namespace colltune
