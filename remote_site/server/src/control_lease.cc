#include "control_lease.h"

#include <utility>

namespace tether::remote::server {

bool ControlLease::lapsed(Clock::time_point now) const {
  if (holder_.empty()) return true;
  auto it = open_streams_.find(holder_);
  if (it != open_streams_.end() && it->second > 0) return false;
  return now - renewed_ > timeout_;
}

void ControlLease::lapse_if_due(Clock::time_point now) {
  if (holder_.empty() || !lapsed(now)) return;
  lapses_.push_back(Lapse{holder_, now - renewed_});
  holder_.clear();
}

std::optional<std::string> ControlLease::claim(const std::string& operator_name,
                                               Clock::time_point now, bool* renewal) {
  std::lock_guard lock(mutex_);
  lapse_if_due(now);
  if (!holder_.empty() && holder_ != operator_name) {
    return "the arm is controlled by operator '" + holder_ +
           "'; others may observe (status, list, telemetry) or stop it";
  }
  if (renewal != nullptr) *renewal = holder_ == operator_name;
  holder_ = operator_name;
  renewed_ = now;
  return std::nullopt;
}

void ControlLease::open_stream(const std::string& operator_name) {
  std::lock_guard lock(mutex_);
  ++open_streams_[operator_name];
}

void ControlLease::close_stream(const std::string& operator_name, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (--open_streams_[operator_name] <= 0) open_streams_.erase(operator_name);
  if (holder_ == operator_name) renewed_ = now;
}

std::string ControlLease::take_over(const std::string& operator_name, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  lapse_if_due(now);
  std::string previous = holder_;
  holder_ = operator_name;
  renewed_ = now;
  return previous;
}

bool ControlLease::streaming(const std::string& operator_name) {
  std::lock_guard lock(mutex_);
  const auto it = open_streams_.find(operator_name);
  return it != open_streams_.end() && it->second > 0;
}

void ControlLease::release(const std::string& operator_name) {
  std::lock_guard lock(mutex_);
  if (holder_ == operator_name) holder_.clear();
}

std::string ControlLease::holder(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  lapse_if_due(now);
  return holder_;
}

void ControlLease::expire(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  lapse_if_due(now);
}

std::vector<ControlLease::Lapse> ControlLease::take_lapses() {
  std::lock_guard lock(mutex_);
  return std::exchange(lapses_, {});
}

}  // namespace tether::remote::server
