#pragma once

// One operator controls the arm at a time (issue 4, link safety). The lease is taken
// explicitly or by the first controlling call while the arm is free, renewed by every call
// of its holder, held for as long as the holder has a stream open, and lapses after
// `timeout` of silence otherwise — so a ground station that vanished does not lock the arm
// out for good.
//
// A lapse is an event the site audits (issue 32): whichever call notices it first — the
// server's periodic expire(), a claim, a takeover, a look at the holder — records it once,
// and the server takes the records (take_lapses()) to write them.

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tether::remote::server {

class ControlLease {
 public:
  using Clock = std::chrono::steady_clock;

  // A lease that lapsed: who held it and how long they had been silent when it was noticed.
  struct Lapse {
    std::string holder;
    Clock::duration silent{};
  };

  explicit ControlLease(Clock::duration timeout) : timeout_(timeout) {}

  Clock::duration timeout() const { return timeout_; }

  // Takes or renews the lease for `operator_name`; returns the refusal message (naming the
  // holder) when someone else holds it. `renewal`, when given, is set to whether
  // `operator_name` already held the lease (a renewal rather than an acquisition).
  std::optional<std::string> claim(const std::string& operator_name, Clock::time_point now,
                                   bool* renewal = nullptr);
  void open_stream(const std::string& operator_name);
  void close_stream(const std::string& operator_name, Clock::time_point now);
  // Gives the lease to `operator_name` whoever holds it (an admin's forced takeover);
  // returns the previous holder, empty when the lease was free.
  std::string take_over(const std::string& operator_name, Clock::time_point now);
  // True while `operator_name` has a stream open.
  bool streaming(const std::string& operator_name);
  // Gives the lease up if `operator_name` holds it (a release, not a lapse).
  void release(const std::string& operator_name);
  // The current holder, empty when free.
  std::string holder(Clock::time_point now);
  // Lets the lease lapse if it is due to at `now`: the server's periodic check, so that a
  // lapse is noticed when nobody calls.
  void expire(Clock::time_point now);
  // The lapses noticed since the last call, oldest first; each is returned once.
  std::vector<Lapse> take_lapses();

 private:
  bool lapsed(Clock::time_point now) const;
  // Frees a lease whose holder has been silent past the timeout, recording the lapse.
  void lapse_if_due(Clock::time_point now);

  Clock::duration timeout_;
  std::mutex mutex_;
  std::string holder_;
  Clock::time_point renewed_{};
  std::map<std::string, int> open_streams_;
  std::vector<Lapse> lapses_;
};

}  // namespace tether::remote::server
