// Giving memory back once a burst of work is over. A long-running server or bridge that was busy
// a minute ago holds pages its allocator no longer uses; after a quiet spell they go back to the
// system instead of waiting for the allocator's own decay.
#pragma once

#include <cstddef>

namespace pf {

// Returns the allocator's free pages to the system now: every jemalloc arena is purged when the
// process runs on jemalloc, else glibc's malloc_trim. Live allocations are untouched. Any thread;
// it takes the allocator's locks for a few milliseconds, so call it when the process is idle.
void release_free_memory();

// The process's resident memory in bytes (Linux /proc/self/statm), 0 when unknown.
size_t resident_bytes();

}  // namespace pf
