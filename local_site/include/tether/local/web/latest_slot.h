#pragma once

// A latest-value hand-off between one producer thread and one consumer thread (a triple
// buffer): the producer fills back() and publish()es it; the consumer take()s the newest
// published value, if there is one it has not taken, and reads it at front(). Neither side
// ever waits for the other — each step is one atomic exchange — so a telemetry thread that
// publishes at 1 kHz is never held up by a consumer that is slow, stalled or gone; values
// the consumer did not take in time are overwritten, never queued.

#include <array>
#include <atomic>
#include <cstdint>

namespace tether::local {

template <class T>
class LatestSlot {
 public:
  LatestSlot() = default;
  LatestSlot(const LatestSlot&) = delete;
  LatestSlot& operator=(const LatestSlot&) = delete;

  // Producer: the buffer to fill, then publish() it. Values of T are reused, so a T that
  // holds strings and vectors stops allocating once their capacities have grown.
  T& back() { return buffers_[back_]; }
  void publish() { back_ = middle_.exchange(back_ | kFresh, std::memory_order_acq_rel) & kIndex; }

  // Consumer: true when a value newer than front() was published; front() is then it.
  bool take() {
    if ((middle_.load(std::memory_order_relaxed) & kFresh) == 0) return false;
    front_ = middle_.exchange(front_, std::memory_order_acq_rel) & kIndex;
    return true;
  }
  const T& front() const { return buffers_[front_]; }

 private:
  static constexpr unsigned kIndex = 3;  // the buffer's index in the low two bits
  static constexpr unsigned kFresh = 4;  // set: the middle buffer has not been taken
  std::array<T, 3> buffers_{};
  unsigned back_ = 0;                // producer's
  std::atomic<unsigned> middle_{1};  // exchanged by both
  unsigned front_ = 2;               // consumer's
};

}  // namespace tether::local
