#include "quotas.h"

#include <fmt/format.h>

#include <algorithm>

namespace tether::remote::server {

std::size_t max_request_bytes(std::string_view method) {
  // A whole task set: 64 waypoints, every behaviour and obstacles are under 32 KiB.
  if (method == "UploadTask" || method == "UpdateTask") return std::size_t{256} * 1024;
  // Path (256) and value (16 KiB) of one parameter, with room for the encoding.
  if (method == "SetParameter") return std::size_t{20} * 1024;
  // Names, flags and a hand-controller increment.
  return std::size_t{4} * 1024;
}

std::string Quotas::open(Counts& counts, const std::string& identity, int most, const char* what) {
  std::lock_guard lock(mutex_);
  int& open = counts[identity];
  if (open >= most) {
    return fmt::format("'{}' already has {} {} open: at most {} per identity", identity, open, what,
                       most);
  }
  ++open;
  return {};
}

void Quotas::close(Counts& counts, const std::string& identity) {
  std::lock_guard lock(mutex_);
  const auto it = counts.find(identity);
  if (it != counts.end() && --it->second <= 0) counts.erase(it);
}

std::string Quotas::open_stream(const std::string& identity) {
  return open(streams_, identity, options_.max_streams, "streams");
}

void Quotas::close_stream(const std::string& identity) { close(streams_, identity); }

std::string Quotas::open_camera_view(const std::string& identity) {
  return open(camera_views_, identity, options_.max_camera_views, "camera views");
}

void Quotas::close_camera_view(const std::string& identity) { close(camera_views_, identity); }

bool Quotas::take(Buckets& buckets, const std::string& identity, Clock::time_point now, double rate,
                  int burst, double& wait) {
  const auto [it, created] = buckets.try_emplace(identity);
  Bucket& bucket = it->second;
  if (created) {
    bucket.tokens = burst;
  } else {
    const double elapsed = std::chrono::duration<double>(now - bucket.filled).count();
    bucket.tokens = std::min<double>(burst, bucket.tokens + elapsed * rate);
  }
  bucket.filled = now;
  if (bucket.tokens < 1.0) {
    wait = (1.0 - bucket.tokens) / rate;
    return false;
  }
  bucket.tokens -= 1.0;
  return true;
}

std::string Quotas::take_upload(const std::string& identity, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  double wait = 0.0;
  if (take(uploads_, identity, now, options_.uploads_per_second, options_.upload_burst, wait)) {
    return {};
  }
  return fmt::format(
      "'{}' uploads faster than {} per second (bursts of up to {}); try again "
      "in {:.1f} s",
      identity, options_.uploads_per_second, options_.upload_burst, wait);
}

std::string Quotas::take_parameter(const std::string& identity, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  double wait = 0.0;
  if (take(parameters_, identity, now, options_.parameters_per_second, options_.parameter_burst,
           wait)) {
    return {};
  }
  return fmt::format(
      "'{}' sets parameters faster than {} per second (bursts of up to {}); try again "
      "in {:.3f} s",
      identity, options_.parameters_per_second, options_.parameter_burst, wait);
}

}  // namespace tether::remote::server
