#pragma once

// Lock-free hand-off of heap objects (task parameter sets) from a non-real-time thread to
// the control loop. The loop never allocates or frees: it takes the pending object and
// parks the one it replaces in a retired slot, which the publishing side frees. The loop
// takes a new object only when the retired slot is empty, so at most one object waits to
// be freed and nothing leaks.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
//
// The value is kept as 64-bit atomic words, stored with release and loaded with acquire
// ordering (Boehm, "Can seqlocks get along with programming language memory models?"): a
// reader that sees any word of a newer write also sees that write's odd sequence number,
// so a torn copy is always retried. Every access is a C++ atomic, so the hand-off is free of
// data races by the language's rules and ThreadSanitizer can check it; on x86-64 these
// orderings compile to plain moves.
template <typename T>
class SeqLock {
  // T must be copyable bytewise: trivially copyable, or built of fixed-size Eigen types
  // (their storage is the object itself; their copy constructors are user-provided, so the
  // standard trait says no).
  static constexpr std::size_t kWords =
      (sizeof(T) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);

 public:
  SeqLock() { store(T{}); }
  SeqLock(const SeqLock&) = delete;
  SeqLock& operator=(const SeqLock&) = delete;

  void store(const T& value) noexcept {
    std::array<std::uint64_t, kWords> words{};
    std::memcpy(words.data(), static_cast<const void*>(&value), sizeof(T));
    const unsigned s = sequence_.load(std::memory_order_relaxed);
    sequence_.store(s + 1, std::memory_order_relaxed);
    for (std::size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_release);
    sequence_.store(s + 2, std::memory_order_release);
  }
  T load() const noexcept {
    std::array<std::uint64_t, kWords> words;
    unsigned before, after;
    do {
      before = sequence_.load(std::memory_order_acquire);
      for (std::size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_acquire);
      after = sequence_.load(std::memory_order_relaxed);
    } while ((before & 1U) != 0 || before != after);
    T copy;
    std::memcpy(static_cast<void*>(&copy), words.data(), sizeof(T));
    return copy;
  }

 private:
  std::atomic<unsigned> sequence_{0};
  std::array<std::atomic<std::uint64_t>, kWords> words_{};
};

}  // namespace tether::remote
