#pragma once

// Lock-free hand-off of heap objects (task parameter sets) from a non-real-time thread to
// the control loop. The loop never allocates or frees: it takes the pending object and
// parks the one it replaces in a retired slot, which the publishing side frees. The loop
// takes a new object only when the retired slot is empty, so at most one object waits to
// be freed and nothing leaks.

#include <atomic>
#include <memory>

namespace tether::remote {

template <typename T>
class Mailbox {
 public:
  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;
  ~Mailbox() {
    delete pending_.exchange(nullptr);
    delete retired_.exchange(nullptr);
  }

  // Publisher side. An object published but not yet taken is replaced (and freed).
  void publish(std::unique_ptr<T> value) {
    collect();
    delete pending_.exchange(value.release(), std::memory_order_acq_rel);
  }
  // Frees the object the loop retired, if any.
  void collect() { delete retired_.exchange(nullptr, std::memory_order_acq_rel); }
  bool has_pending() const { return pending_.load(std::memory_order_acquire) != nullptr; }

  // Loop side: the newest published object, or nullptr.
  T* take() noexcept {
    if (retired_.load(std::memory_order_acquire) != nullptr) return nullptr;
    return pending_.exchange(nullptr, std::memory_order_acq_rel);
  }
  // Loop side: hands back the object `take` replaced (may be nullptr). Call at most once
  // per successful take.
  void retire(T* old) noexcept {
    if (old != nullptr) retired_.store(old, std::memory_order_release);
  }

 private:
  std::atomic<T*> pending_{nullptr};
  std::atomic<T*> retired_{nullptr};
};

// Single-writer snapshot for trivially copyable values (telemetry, the latched breach): the
// loop writes without waiting, readers retry while a write is in progress.
template <typename T>
class SeqLock {
 public:
  void store(const T& value) noexcept {
    const unsigned s = sequence_.load(std::memory_order_relaxed);
    sequence_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    value_ = value;
    std::atomic_thread_fence(std::memory_order_release);
    sequence_.store(s + 2, std::memory_order_release);
  }
  T load() const noexcept {
    T copy;
    unsigned before, after;
    do {
      before = sequence_.load(std::memory_order_acquire);
      std::atomic_thread_fence(std::memory_order_acquire);
      copy = value_;
      std::atomic_thread_fence(std::memory_order_acquire);
      after = sequence_.load(std::memory_order_relaxed);
    } while ((before & 1U) != 0 || before != after);
    return copy;
  }

 private:
  std::atomic<unsigned> sequence_{0};
  T value_{};
};

}  // namespace tether::remote
