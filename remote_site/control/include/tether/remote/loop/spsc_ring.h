#pragma once

// Single-producer single-consumer ring buffer: how I/O threads hand samples to the control
// loop (and the loop hands telemetry back) without locks or allocation. Capacity is a
// compile-time power of two; push fails (returns false) when full rather than overwrite,
// so a sample is never lost silently — the producer counts the refusal. The slots live on
// the heap, allocated once at construction: a ring of telemetry is megabytes, more than the
// stack of whoever owns the loop should carry.
//
// One producer and one consumer at a time, but not necessarily one thread each: the
// teleoperation stream pushes from whichever gRPC thread runs its read callback. Each side
// therefore loads its own index with acquire too, so a producer (or consumer) role that
// moves to another thread is ordered after its predecessor's slot writes by the index
// alone, whatever the hand-over between the threads was (on x86-64 an acquire load is a
// plain move).

#include <atomic>
#include <cstddef>
#include <memory>

namespace tether::remote {

template <typename T, std::size_t Capacity>
class SpscRing {
  static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0,
                "capacity must be a power of two");

 public:
  // Producer side.
  bool push(const T& value) noexcept {
    const std::size_t head = head_.load(std::memory_order_acquire);
    if (head - tail_.load(std::memory_order_acquire) == Capacity) return false;
    slots_[head & (Capacity - 1)] = value;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer side.
  bool pop(T& value) noexcept {
    const std::size_t tail = tail_.load(std::memory_order_acquire);
    if (tail == head_.load(std::memory_order_acquire)) return false;
    value = slots_[tail & (Capacity - 1)];
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  std::size_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  static constexpr std::size_t capacity() { return Capacity; }

 private:
  std::unique_ptr<T[]> slots_ = std::make_unique<T[]>(Capacity);
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

}  // namespace tether::remote
