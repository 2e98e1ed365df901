// Giving memory back (see allocator.h).
#include "core/allocator.h"

#include <malloc.h>

#include <unistd.h>

#include <cstddef>
#include <cstdio>

// jemalloc's control entry point, present only when the binary links jemalloc (see
// CMakeLists.txt, pf_fast_allocator): weak, so libraries linked without it still resolve.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace pf {

void release_free_memory() {
  if (mallctl) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge": 4096 is jemalloc's constant for every arena.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  malloc_trim(0);
}

size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace pf
