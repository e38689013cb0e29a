#include "tether/local/console/camera_watch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tether/remote/camera/video_codec.h"

namespace tether::local {

namespace {

// IVF, the VP9 elementary stream's simplest container: a 32-byte file header, then each
// frame as a 12-byte header (size u32, timestamp u64) and its bytes, little-endian.
class IvfWriter {
 public:
  IvfWriter(const std::string& path, const SceneCamera& camera) : file_(path, std::ios::binary) {
    if (!file_) throw std::runtime_error("cannot write " + path);
    std::string h(32, '\0');
    h.replace(0, 4, "DKIF");
    put16(h, 6, 32);
    h.replace(8, 4, "VP90");
    put16(h, 12, static_cast<std::uint16_t>(camera.width));
    put16(h, 14, static_cast<std::uint16_t>(camera.height));
    // Time base: milliseconds; frames are stamped with their capture time since the first.
    put32(h, 16, 1000);
    put32(h, 20, 1);
    file_.write(h.data(), static_cast<std::streamsize>(h.size()));
    path_ = path;
  }
  void write(const VideoFrame& f) {
    if (first_ns_ < 0) first_ns_ = f.capture_remote_ns;
    std::string h(12, '\0');
    put32(h, 0, static_cast<std::uint32_t>(f.data.size()));
    const auto ms = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, (f.capture_remote_ns - first_ns_) / 1'000'000));
    for (int i = 0; i < 8; ++i) h[4 + i] = static_cast<char>((ms >> (8 * i)) & 0xFF);
    file_.write(h.data(), 12);
    file_.write(reinterpret_cast<const char*>(f.data.data()),
                static_cast<std::streamsize>(f.data.size()));
    ++frames_;
  }
  void finish() {
    // The header's frame count, now that it is known.
    file_.seekp(24);
    std::string n(4, '\0');
    put32(n, 0, frames_);
    file_.write(n.data(), 4);
    file_.flush();
    if (!file_) throw std::runtime_error("error writing " + path_);
  }

 private:
  static void put16(std::string& s, std::size_t at, std::uint16_t v) {
    s[at] = static_cast<char>(v & 0xFF);
    s[at + 1] = static_cast<char>(v >> 8);
  }
  static void put32(std::string& s, std::size_t at, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  std::ofstream file_;
  std::string path_;
  std::int64_t first_ns_ = -1;
  std::uint32_t frames_ = 0;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

CameraWatchReport watch_camera_for(RemoteSiteClient& site, const CameraWatchOptions& options) {
  // The frames are decoded and written here, off the view's receiving thread, so a slow disk
  // or decoder never holds up the datagrams.
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<VideoFrame> waiting;
  auto view = site.watch_camera(options.camera, options.bit_rate_kbps, [&](const VideoFrame& f) {
    std::lock_guard lock(mutex);
    waiting.push_back(f);
    arrived.notify_one();
  });
  CameraWatchReport report;
  remote::camera::VideoDecoder decoder;
  std::vector<std::uint8_t> rgb;
  std::vector<double> ages;
  std::unique_ptr<IvfWriter> ivf;
  std::optional<std::chrono::steady_clock::time_point> first;
  std::uint64_t bytes_at_first = 0;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(options.duration));
  std::vector<VideoFrame> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex);
      arrived.wait_until(
          lock, std::min(end, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)),
          [&] { return !waiting.empty(); });
      batch.swap(waiting);
    }
    for (const VideoFrame& f : batch) {
      if (!first) {
        first = std::chrono::steady_clock::now();
        bytes_at_first = view->stats().bytes;
      }
      int width = 0;
      int height = 0;
      if (decoder.decode(f.data, rgb, width, height)) {
        ++report.decoded;
      } else {
        ++report.undecodable;
      }
      if (f.pose_known) ++report.with_pose;
      if (f.capture_ground_ns != 0) {
        ages.push_back(1e-6 * static_cast<double>(f.arrival_ns - f.capture_ground_ns));
      }
      if (!options.ivf_path.empty()) {
        if (!ivf) ivf = std::make_unique<IvfWriter>(options.ivf_path, view->stats().camera);
        ivf->write(f);
      }
    }
    batch.clear();
    const CameraViewStats st = view->stats();
    if (st.ended) {
      throw std::runtime_error(st.error);  // it names the camera
    }
    if (std::chrono::steady_clock::now() >= end) break;
  }
  report.view = view->stats();
  view.reset();
  if (ivf) ivf->finish();
  if (first) {
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *first).count();
  }
  if (report.seconds > 0.0) {
    report.kbit_per_s =
        8e-3 * static_cast<double>(report.view.bytes - bytes_at_first) / report.seconds;
    report.frames_per_s = static_cast<double>(report.decoded) / report.seconds;
  }
  report.aged = ages.size();
  report.age_p50_ms = percentile(ages, 0.5);
  report.age_p99_ms = percentile(ages, 0.99);
  report.age_max_ms = ages.empty() ? 0.0 : ages.back();
  return report;
}

void print_report(std::ostream& out, const CameraWatchReport& r) {
  const CameraViewStats& v = r.view;
  char line[160];
  auto row = [&](const char* key, double value, const char* format) {
    std::snprintf(line, sizeof line, format, value);
    out << key << ' ' << line << '\n';
  };
  out << "camera " << v.camera.name << '\n';
  out << "codec " << v.codec << '\n';
  out << "size " << v.camera.width << 'x' << v.camera.height << '\n';
  row("seconds", r.seconds, "%.2f");
  row("frames", static_cast<double>(v.frames), "%.0f");
  row("decoded", static_cast<double>(r.decoded), "%.0f");
  row("undecodable", static_cast<double>(r.undecodable), "%.0f");
  row("lost", static_cast<double>(v.lost), "%.0f");
  row("held_back", static_cast<double>(v.held_back), "%.0f");
  row("repaired", static_cast<double>(v.repaired), "%.0f");
  row("key_requests", static_cast<double>(v.key_requests), "%.0f");
  row("dropped", static_cast<double>(v.dropped), "%.0f");
  row("site_sent", static_cast<double>(v.sent), "%.0f");
  row("with_pose", static_cast<double>(r.with_pose), "%.0f");
  row("fps", r.frames_per_s, "%.2f");
  row("kbit_per_s", r.kbit_per_s, "%.1f");
  row("encode_ms", v.encode_ms, "%.2f");
  out << "clock_known " << (v.clock_known ? 1 : 0) << '\n';
  row("round_trip_ms", 1e-6 * static_cast<double>(v.round_trip_ns), "%.3f");
  row("aged", static_cast<double>(r.aged), "%.0f");
  row("age_p50_ms", r.age_p50_ms, "%.1f");
  row("age_p99_ms", r.age_p99_ms, "%.1f");
  row("age_max_ms", r.age_max_ms, "%.1f");
}

}  // namespace tether::local
