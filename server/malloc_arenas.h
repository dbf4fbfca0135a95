// The daemon's malloc arenas. glibc gives each new thread its own arena (up to 8 per core) and
// keeps what an arena once held: in a long-running daemon the simulation threads of each
// campaign landed in fresh arenas, so the peak and the idle resident set grew with every
// campaign (bench/memory.md, "The daemon over three campaigns"). Bounding the arenas to the
// number of cores keeps the threads that run at the same time apart and lets later campaigns
// reuse the memory earlier ones gave back.
#pragma once

#include <thread>

namespace colltune {

// The arena limit for a process on `cores` cores whose MALLOC_ARENA_MAX variable is `env`
// (nullptr when unset): 0 (leave glibc alone) when the variable is set, since the operator
// chose; otherwise max(2, cores).
int malloc_arena_limit(unsigned cores, const char* env);

// Applies malloc_arena_limit(cores, getenv("MALLOC_ARENA_MAX")) with mallopt(M_ARENA_MAX).
// Call once at start, before the process starts threads. Returns the limit set (0: none).
int bound_malloc_arenas(unsigned cores = std::thread::hardware_concurrency());

// Arenas glibc holds now (malloc_info's <heap> elements). For tests and diagnostics.
int malloc_arena_count();

}  // namespace colltune
