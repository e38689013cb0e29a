#pragma once

// Counts heap allocations made by the current thread while a ScopedAllocationCounter is
// alive. Works by interposing malloc and friends in the test executable (glibc), so it
// sees allocations from operator new, Eigen and C code alike.

#include <cstddef>

namespace tether::testing {

class ScopedAllocationCounter {
 public:
  ScopedAllocationCounter();
  ~ScopedAllocationCounter();
  ScopedAllocationCounter(const ScopedAllocationCounter&) = delete;
  ScopedAllocationCounter& operator=(const ScopedAllocationCounter&) = delete;

  std::size_t count() const;
};

}  // namespace tether::testing
