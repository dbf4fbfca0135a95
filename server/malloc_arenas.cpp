#include "server/malloc_arenas.h"

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace colltune {

int malloc_arena_limit(unsigned cores, const char* env) {
  if (env != nullptr) return 0;
  return static_cast<int>(std::max(2u, cores));
}

int bound_malloc_arenas(unsigned cores) {
  const int limit = malloc_arena_limit(cores, std::getenv("MALLOC_ARENA_MAX"));
  if (limit > 0) ::mallopt(M_ARENA_MAX, limit);
  return limit;
}

int malloc_arena_count() {
  char* text = nullptr;
  std::size_t length = 0;
  FILE* out = ::open_memstream(&text, &length);
  if (out == nullptr) return -1;
  const int rc = ::malloc_info(0, out);
  std::fclose(out);
  int count = 0;
  if (rc == 0) {
    const std::string_view xml(text, length);
    for (std::size_t at = xml.find("<heap nr="); at != std::string_view::npos;
         at = xml.find("<heap nr=", at + 1))
      ++count;
  }
  std::free(text);
  return rc == 0 ? count : -1;
}

}  // namespace colltune
