// The request head as the daemon's front door (server/http_gate.h) sees it before any worker
// thread or cpp-httplib does: where it ends, and whether its framing is unambiguous.
//
// HTTP/1.1 message framing (RFC 9112 section 6) decides where one request ends and the next
// begins; two readers that disagree on it (a proxy and this daemon) let a client smuggle a
// request past the proxy. So only one reading is accepted:
//   - every line ends with CRLF; no NUL, no other control byte than HT; no obs-fold;
//   - header names are tokens with no space before the colon;
//   - Content-Length is digits; several are allowed only when they all agree;
//   - Transfer-Encoding is exactly "chunked" (one coding, one header), never with
//     Content-Length, never on HTTP/1.0;
//   - one Host header at most.
// A request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3): the head
// is given an explicit "Content-Length: 0" so that cpp-httplib does not wait for the client to
// close the connection (it would, for a POST, until its read timeout).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace colltune {

// The length of the head at the start of `bytes` (request line, header lines and the empty
// line), or nullopt while it is incomplete. A head ended by a bare LF line counts as complete
// (so that it is refused at once instead of timing out).
std::optional<std::size_t> request_head_length(std::string_view bytes);

struct HeadVerdict {
  int status = 0;                  // 0: acceptable; else the HTTP status to answer (400, 501, 505)
  std::string message;             // why, for the error body
  std::size_t content_length = 0;  // body bytes that follow the head (0 when chunked)
  bool chunked = false;
  bool expects_continue = false;  // "Expect: 100-continue": the body follows our 100 only
  std::string head;               // the head to hand on (possibly with "Content-Length: 0" added)
};

// Checks a complete head (as delimited by request_head_length).
HeadVerdict inspect_request_head(std::string_view head);

}  // namespace colltune
