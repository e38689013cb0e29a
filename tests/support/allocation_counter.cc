#include "allocation_counter.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>

// glibc's own allocator entry points: the counting replacements call them so they count
// without recursing into themselves. The names are glibc's, reserved to the implementation.
// NOLINTBEGIN(bugprone-reserved-identifier)
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
}
// NOLINTEND(bugprone-reserved-identifier)

namespace {
thread_local bool g_counting = false;
thread_local std::size_t g_count = 0;

inline void note() {
  if (g_counting) ++g_count;
}
}  // namespace

// Under AddressSanitizer or ThreadSanitizer the sanitizer's runtime owns malloc, and
// interposing it here would hand it memory it never saw. Those builds count nothing and
// their test presets leave the *Allocation tests out; the ordinary builds run them.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
extern "C" {

void* malloc(std::size_t size) {
  note();
  return __libc_malloc(size);
}

void* calloc(std::size_t n, std::size_t size) {
  note();
  return __libc_calloc(n, size);
}

void* realloc(void* p, std::size_t size) {
  note();
  return __libc_realloc(p, size);
}

void* memalign(std::size_t alignment, std::size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(std::size_t alignment, std::size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  note();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}

}  // extern "C"
#endif

namespace tether::testing {

ScopedAllocationCounter::ScopedAllocationCounter() {
  g_count = 0;
  g_counting = true;
}

ScopedAllocationCounter::~ScopedAllocationCounter() { g_counting = false; }

std::size_t ScopedAllocationCounter::count() const { return g_count; }

}  // namespace tether::testing
