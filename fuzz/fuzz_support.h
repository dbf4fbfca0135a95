// Helpers shared by the libFuzzer targets: a failed invariant must be a crash libFuzzer saves.
#pragma once

#include <cstdio>
#include <cstdlib>

// Aborts with a message (libFuzzer records the input as a crash).
#define FUZZ_CHECK(cond)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
