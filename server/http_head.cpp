#include "server/http_head.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace colltune {
namespace {

bool is_token_char(unsigned char c) {
  if (std::isalnum(c)) return true;
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return kExtra.find(static_cast<char>(c)) != std::string_view::npos;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HeadVerdict refuse(int status, std::string message) {
  HeadVerdict v;
  v.status = status;
  v.message = std::move(message);
  return v;
}

}  // namespace

std::optional<std::size_t> request_head_length(std::string_view bytes) {
  // The first empty line ends the head: "\r\n\r\n", or "\n\n" / "\n\r\n" from a client that
  // does not end its lines with CRLF (refused by inspect_request_head).
  for (std::size_t i = bytes.find('\n'); i != std::string_view::npos; i = bytes.find('\n', i + 1)) {
    if (i + 1 < bytes.size() && bytes[i + 1] == '\n') return i + 2;
    if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') return i + 3;
  }
  return std::nullopt;
}

HeadVerdict inspect_request_head(std::string_view head) {
  // Lines, each required to end with CRLF.
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < head.size();) {
    const auto nl = head.find('\n', start);
    if (nl == std::string_view::npos) return refuse(400, "request head does not end with CRLF");
    if (nl == start || head[nl - 1] != '\r')
      return refuse(400, "request head line not ended by CRLF");
    lines.push_back(head.substr(start, nl - 1 - start));
    start = nl + 1;
  }
  if (lines.size() < 2 || !lines.back().empty()) return refuse(400, "incomplete request head");
  lines.pop_back();
  for (auto line : lines)
    for (unsigned char c : line)
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return refuse(400, "control character (NUL, CR, ...) in the request head");

  const std::string_view request_line = lines.front();
  const auto sp1 = request_line.find(' ');
  const auto sp2 = request_line.rfind(' ');
  if (sp1 == std::string_view::npos || sp1 == 0 || sp2 == sp1)
    return refuse(400, "malformed request line");
  const std::string_view method = request_line.substr(0, sp1);
  if (!std::all_of(method.begin(), method.end(), [](char c) { return is_token_char(c); }))
    return refuse(400, "malformed request method");
  const std::string_view version = request_line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    if (version.rfind("HTTP/", 0) == 0) return refuse(505, "only HTTP/1.0 and HTTP/1.1");
    return refuse(400, "malformed request line");
  }

  std::optional<std::string> content_length;
  int transfer_encodings = 0;
  std::string transfer_encoding;
  int hosts = 0;
  bool expects_continue = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.front() == ' ' || line.front() == '\t')
      return refuse(400, "folded header line (obs-fold) is not accepted");
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return refuse(400, "header line without a name");
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), [](char c) { return is_token_char(c); }))
      return refuse(400, "malformed header name (no space before the colon)");
    const std::string key = lower(name);
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "content-length") {
      // "42" or a list "42, 42" of equal values.
      for (std::size_t start = 0; start <= value.size();) {
        auto comma = value.find(',', start);
        if (comma == std::string_view::npos) comma = value.size();
        const std::string_view one = trim(value.substr(start, comma - start));
        if (one.empty() || one.size() > 15 || !std::all_of(one.begin(), one.end(), [](char c) {
              return std::isdigit(static_cast<unsigned char>(c));
            }))
          return refuse(400, "Content-Length is not a number");
        std::string digits(one);
        digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
        if (content_length && *content_length != digits)
          return refuse(400, "conflicting Content-Length headers");
        content_length = digits;
        start = comma + 1;
      }
    } else if (key == "transfer-encoding") {
      ++transfer_encodings;
      transfer_encoding = lower(value);
    } else if (key == "host") {
      ++hosts;
    } else if (key == "expect") {
      expects_continue = lower(value) == "100-continue";
    }
  }
  if (hosts > 1) return refuse(400, "more than one Host header");

  HeadVerdict v;
  v.expects_continue = expects_continue;
  if (transfer_encodings > 0) {
    if (content_length)
      return refuse(400, "both Transfer-Encoding and Content-Length (ambiguous framing)");
    if (transfer_encodings > 1 || transfer_encoding != "chunked")
      return refuse(400, "unsupported Transfer-Encoding (only a single 'chunked' is accepted)");
    if (version == "HTTP/1.0") return refuse(400, "Transfer-Encoding on an HTTP/1.0 request");
    v.chunked = true;
  } else if (content_length) {
    v.content_length = static_cast<std::size_t>(std::stoull(*content_length));
  }
  v.head = std::string(head);
  if (!content_length && transfer_encodings == 0 && method != "GET" && method != "HEAD")
    v.head.insert(v.head.size() - 2, "Content-Length: 0\r\n");
  return v;
}

}  // namespace colltune
