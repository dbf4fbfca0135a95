// Raw bytes to the daemon on a fresh loopback connection, for what an HTTP client would not
// send as it is (garbage, huge bodies, unnormalised paths).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <regex>
#include <string>

namespace colltune::testing {

// Sends `bytes` and returns the daemon's answer: its headers, then Content-Length bytes of body
// (the connection may stay open), or what came before the daemon closed the connection or 5 s
// passed. Empty when the connection was refused.
inline std::string raw_exchange(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  char buf[4096];
  const std::regex length("Content-Length: ([0-9]+)", std::regex::icase);
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
    answer.append(buf, static_cast<std::size_t>(n));
    const auto end = answer.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    std::smatch m;
    const std::string head = answer.substr(0, end);
    const std::size_t body = std::regex_search(head, m, length) ? std::stoul(m[1]) : 0;
    if (answer.size() >= end + 4 + body) break;
  }
  ::close(fd);
  return answer;
}

}  // namespace colltune::testing
