#pragma once

// gRPC's callback API runs a reactor's callbacks after the reactor is created; its reads
// complete one after another, and so do its writes; OnDone runs after every other callback.
// It does so through its completion queue, and Debian's gRPC is built without
// ThreadSanitizer, so that ordering is invisible to TSan: every field a reactor sets in one
// callback and reads in the next (on another gRPC thread) would be reported as a race.
// These annotations state exactly that ordering to TSan, at tether's reactors, with one
// key per ordered chain: the reactor's creation, its reads, its writes. Callbacks gRPC does
// not order (a read completing beside a write, OnCancel beside either) get no order from
// them, so fields they share stay under the reactor's mutex and are still checked. Outside
// a TSan build they compile to nothing.

// GCC defines __SANITIZE_THREAD__ under -fsanitize=thread; clang answers __has_feature.
#if defined(__SANITIZE_THREAD__)
#define TETHER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TETHER_TSAN 1
#endif
#endif

#if defined(TETHER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace tether::remote::server {

#if defined(TETHER_TSAN)
inline void callback_begins(const void* reactor) { __tsan_acquire(const_cast<void*>(reactor)); }
inline void callback_ends(const void* reactor) { __tsan_release(const_cast<void*>(reactor)); }
#else
inline void callback_begins(const void* /*reactor*/) {}
inline void callback_ends(const void* /*reactor*/) {}
#endif

// Brackets one callback of an ordered chain (`key`: the chain's address, e.g. the message
// its reads fill); the chain also starts after the reactor's creation (`creation`). A
// callback that starts the chain's next operation calls callback_ends(key) just before it:
// the next callback may begin on another thread before this scope closes.
class CallbackScope {
 public:
  CallbackScope(const void* creation, const void* key) : key_(key) {
    callback_begins(creation);
    callback_begins(key_);
  }
  ~CallbackScope() { callback_ends(key_); }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  const void* key_;
};

}  // namespace tether::remote::server
