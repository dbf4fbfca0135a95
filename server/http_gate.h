// The daemon's front door: its own accept loop in front of cpp-httplib, so that a client that
// has not sent a complete request never holds a worker thread.
//
// Design (an event-driven gate, as nginx does, in front of a pool of request workers):
//   - One gate thread owns the listening socket and every connection that is not running a
//     request: it accepts (non-blocking), runs the TLS handshake, reads the request head (and a
//     body of at most kGateBodyBytes) into the connection's buffer, and checks the framing
//     (server/http_head.h). Waiting there costs a file descriptor and a buffer, no thread.
//   - Only a connection with a complete, well-framed request is queued for a worker. The worker
//     runs cpp-httplib's request processing on a Stream over that buffer (routing, handlers,
//     static files, SSE), and the requests that follow at once on the same connection
//     (already buffered, or arriving within 2 ms; at most 100 in a row); then it gives the
//     connection back to the gate. Bytes that arrived after
//     the request stay in the buffer: pipelined requests are answered in order.
//   - Bounds: a head (and TLS handshake) must be complete within header_timeout of the first
//     byte (of the accept for a new connection), whatever the pace of the bytes: a client
//     trickling a header line every few seconds is closed with 408. An idle keep-alive
//     connection waits in the gate for at most idle_timeout. At most max_connections are open
//     and at most max_connections_per_client from one address: beyond, the connection is
//     answered 503 and closed at once (the accept queue never fills up with them). In a worker,
//     every read or write waits at most io_timeout and the whole request body must arrive
//     within request_timeout.
//   - A request whose body is larger than kGateBodyBytes (or chunked) has its body read by the
//     worker (each read within io_timeout, the whole body within request_timeout); at most a
//     quarter of the workers run such requests at once, the others wait in the gate, so slow
//     uploads cannot take every worker either.
//   - Long-lived event streams run in a worker for their whole life; the API bounds how many
//     there are (max_event_streams, and per client) below the number of workers.
// Errors the gate answers itself (400 framing, 408, 431, 503) are JSON like the API's and close
// the connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace httplib {
class Server;
}

namespace colltune {

struct HttpGateOptions {
  int workers = 96;
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds idle_timeout{10000};
  std::chrono::milliseconds io_timeout{10000};
  std::chrono::milliseconds request_timeout{60000};
  int max_connections = 4096;
  int max_connections_per_client = 128;
  std::size_t max_head_bytes = 64 * 1024;
  std::string tls_cert;  // PEM files; both set: TLS
  std::string tls_key;
};

// Counters since start (for tests, logs and /metrics).
struct HttpGateStats {
  std::uint64_t accepted = 0;
  std::uint64_t refused_busy = 0;   // over max_connections or max_connections_per_client
  std::uint64_t head_timeouts = 0;  // 408: head or handshake not complete in time
  std::uint64_t bad_heads = 0;      // 400/431/505 answered by the gate
  std::uint64_t requests = 0;       // handed to a worker
  int open = 0;                     // connections now open
};

// Bodies up to this size are read by the gate before a worker is involved.
inline constexpr std::size_t kGateBodyBytes = 64 * 1024;

class HttpGate {
 public:
  // `server` holds the routes (it is never bound or listened on itself).
  HttpGate(httplib::Server& server, HttpGateOptions options);
  ~HttpGate();
  HttpGate(const HttpGate&) = delete;
  HttpGate& operator=(const HttpGate&) = delete;

  // Binds host:port (port 0: any free port) and returns the port. Throws std::runtime_error
  // when the address cannot be bound or the TLS files do not load.
  int bind(const std::string& host, int port);
  // Starts the gate thread and the workers.
  void start();
  // Stops accepting, closes waiting connections, lets running requests finish (event streams
  // end when the event hub closes) and joins every thread. Idempotent.
  void stop();

  HttpGateStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace colltune
