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

// A loopback TCP connection to `port` from the source address `from` (any 127.x.y.z: tests
// use several to look like several clients). -1 when it cannot connect.
inline int raw_connect(int port, const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in source{};
  source.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &source.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the daemon sends on `fd` until it closes the connection or `timeout_s` pass.
inline std::string raw_read_all(int fd, int timeout_s = 5) {
  timeval timeout{timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    answer.append(buf, static_cast<std::size_t>(n));
  return answer;
}

}  // namespace colltune::testing
