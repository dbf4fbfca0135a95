// The name of the machine this process runs on, as run provenance records it.
#pragma once

#include <unistd.h>

#include <string>

namespace colltune {

// gethostname(2), or "unknown" when the system gives none.
inline std::string this_host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace colltune
