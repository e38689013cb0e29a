#pragma once

// Per-identity limits of the remote site (ServerOptions::quotas): concurrent streams, the
// rates of uploads and of SetParameter, and the largest request each method takes. A caller beyond
// a limit gets RESOURCE_EXHAUSTED naming the limit; other callers are not affected.

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "tether/remote/server/remote_site_server.h"

namespace tether::remote::server {

// Largest message gRPC accepts on any method [bytes]; a bigger one is refused by gRPC with
// RESOURCE_EXHAUSTED before tether sees it.
inline constexpr std::size_t kMaxReceiveMessage = std::size_t{512} * 1024;

// Largest request of `method` (short name, "UploadTask") [bytes].
std::size_t max_request_bytes(std::string_view method);

class Quotas {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Quotas(const QuotaOptions& options) : options_(options) {}

  // Counts a stream of `identity` in; returns the refusal when it already has max_streams.
  std::string open_stream(const std::string& identity);
  void close_stream(const std::string& identity);
  // Counts a camera view of `identity` in (WatchCamera); its own limit, max_camera_views.
  std::string open_camera_view(const std::string& identity);
  void close_camera_view(const std::string& identity);
  // Takes one upload from `identity`'s token bucket; returns the refusal when it is empty.
  std::string take_upload(const std::string& identity, Clock::time_point now);
  // Takes one SetParameter call from `identity`'s own bucket, likewise.
  std::string take_parameter(const std::string& identity, Clock::time_point now);

  const QuotaOptions& options() const { return options_; }

 private:
  using Counts = std::map<std::string, int, std::less<>>;
  std::string open(Counts& counts, const std::string& identity, int most, const char* what);
  void close(Counts& counts, const std::string& identity);
  struct Bucket {
    double tokens = 0.0;
    Clock::time_point filled{};
  };
  using Buckets = std::map<std::string, Bucket, std::less<>>;
  // Refills `identity`'s bucket at `rate` up to `burst` and takes one token; false when
  // there is none, `wait` then the seconds until there is.
  static bool take(Buckets& buckets, const std::string& identity, Clock::time_point now,
                   double rate, int burst, double& wait);
  QuotaOptions options_;
  std::mutex mutex_;
  Counts streams_;
  Counts camera_views_;
  Buckets uploads_;
  Buckets parameters_;
};

}  // namespace tether::remote::server
