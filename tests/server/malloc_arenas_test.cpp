// The daemon's malloc arena bound (server/malloc_arenas.h). Each case runs in a forked child:
// arenas are per process and a child starts with the parent's single arena.
#include "server/malloc_arenas.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

namespace colltune {
namespace {

// Arenas after `threads` threads each allocate while all of them are alive, in a fresh child;
// `bound` > 0 applies bound_malloc_arenas(bound) first. -1 on failure.
int arenas_after_threads(int threads, unsigned bound) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::close(pipe_fds[0]);
    if (bound > 0) bound_malloc_arenas(bound);
    std::atomic<int> ready{0};
    std::atomic<bool> release{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        void* block = std::malloc(64 * 1024);
        static_cast<char*>(block)[0] = 1;
        ++ready;
        while (!release) std::this_thread::yield();
        std::free(block);
      });
    while (ready < threads) std::this_thread::yield();
    const int count = malloc_arena_count();
    release = true;
    for (auto& t : pool) t.join();
    const ssize_t n = ::write(pipe_fds[1], &count, sizeof count);
    ::_exit(n == sizeof count ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  int count = -1;
  if (::read(pipe_fds[0], &count, sizeof count) != sizeof count) count = -1;
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return count;
}

TEST(MallocArenas, LimitIsTheCoresAtLeastTwoUnlessTheOperatorChose) {
  EXPECT_EQ(malloc_arena_limit(1, nullptr), 2);
  EXPECT_EQ(malloc_arena_limit(2, nullptr), 2);
  EXPECT_EQ(malloc_arena_limit(64, nullptr), 64);
  EXPECT_EQ(malloc_arena_limit(2, "8"), 0);  // MALLOC_ARENA_MAX set: glibc applies it
}

TEST(MallocArenas, ThreadsShareTheBoundedArenas) {
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr) GTEST_SKIP() << "MALLOC_ARENA_MAX is set";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces glibc's malloc";  // not in make check-asan's list
#endif
  // Unbounded, glibc gives each of 8 concurrent threads an arena of its own (the measure sees
  // them) ...
  EXPECT_GT(arenas_after_threads(8, 0), 2);
  // ... bounded to 2 (a 2-core machine), they share the main arena and one more.
  const int bounded = arenas_after_threads(8, 2);
  EXPECT_GE(bounded, 1);
  EXPECT_LE(bounded, 2);
}

}  // namespace
}  // namespace colltune
