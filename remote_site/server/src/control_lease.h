#pragma once

// One operator controls the arm at a time (issue 4, link safety). The lease is taken
// explicitly or by the first controlling call while the arm is free, renewed by every call
// of its holder, held for as long as the holder has a stream open, and lapses after
// `timeout` of silence otherwise — so a ground station that vanished does not lock the arm
// out for good.

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace tether::remote::server {

class ControlLease {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ControlLease(Clock::duration timeout) : timeout_(timeout) {}

  // Takes or renews the lease for `operator_name`; returns the refusal message (naming the
  // holder) when someone else holds it.
  std::optional<std::string> claim(const std::string& operator_name, Clock::time_point now);
  void open_stream(const std::string& operator_name);
  void close_stream(const std::string& operator_name, Clock::time_point now);
  // Gives the lease to `operator_name` whoever holds it (an admin's forced takeover);
  // returns the previous holder, empty when the lease was free.
  std::string take_over(const std::string& operator_name, Clock::time_point now);
  // True while `operator_name` has a stream open.
  bool streaming(const std::string& operator_name);
  // Gives the lease up if `operator_name` holds it.
  void release(const std::string& operator_name);
  // The current holder, empty when free.
  std::string holder(Clock::time_point now);

 private:
  bool lapsed(Clock::time_point now) const;

  Clock::duration timeout_;
  std::mutex mutex_;
  std::string holder_;
  Clock::time_point renewed_{};
  std::map<std::string, int> open_streams_;
};

}  // namespace tether::remote::server
