#pragma once

// gRPC's callback API runs a reactor's callbacks after the reactor is created, and each
// after the ones whose operations completed before it (OnDone last), through its completion
// queue. Debian's gRPC is built without ThreadSanitizer, so that ordering is invisible to
// TSan, and every field a reactor sets in one callback and reads in the next (on another
// gRPC thread) would be reported as a race. These annotations state gRPC's documented
// ordering to TSan at the reactor's boundary, and nothing more: callbacks that do run at
// the same time (a read and a write completing together) are still checked, so fields they
// share stay under the reactor's mutex. Outside a TSan build they compile to nothing.

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace tether::remote::server {

#if defined(__SANITIZE_THREAD__)
inline void callback_begins(const void* reactor) { __tsan_acquire(const_cast<void*>(reactor)); }
inline void callback_ends(const void* reactor) { __tsan_release(const_cast<void*>(reactor)); }
#else
inline void callback_begins(const void* /*reactor*/) {}
inline void callback_ends(const void* /*reactor*/) {}
#endif

// Brackets one callback (or the constructor) of a reactor.
class CallbackScope {
 public:
  explicit CallbackScope(const void* reactor) : reactor_(reactor) { callback_begins(reactor_); }
  ~CallbackScope() { callback_ends(reactor_); }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  const void* reactor_;
};

}  // namespace tether::remote::server
