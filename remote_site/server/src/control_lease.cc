#include "control_lease.h"

namespace tether::remote::server {

bool ControlLease::lapsed(Clock::time_point now) const {
  if (holder_.empty()) return true;
  auto it = open_streams_.find(holder_);
  if (it != open_streams_.end() && it->second > 0) return false;
  return now - renewed_ > timeout_;
}

std::optional<std::string> ControlLease::claim(const std::string& operator_name,
                                               Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (holder_ != operator_name && !lapsed(now)) {
    return "the arm is controlled by operator '" + holder_ +
           "'; others may observe (status, list, telemetry) or stop it";
  }
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
  std::string previous = lapsed(now) ? std::string() : holder_;
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
  if (lapsed(now)) holder_.clear();
  return holder_;
}

}  // namespace tether::remote::server
