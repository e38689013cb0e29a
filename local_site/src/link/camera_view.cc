#include "tether/local/link/camera_view.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <Eigen/Geometry>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "camera_connection.h"
#include "tether/datagram/video_datagram.h"
#include "tether/proto/convert.h"

namespace tether::local {

namespace {

constexpr const char* kOperatorKey = "tether-operator";
constexpr std::int64_t kFeedbackPeriodNs = 200'000'000;

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

struct CameraView::Impl {
  std::shared_ptr<Connection> connection;
  std::string camera;
  int bit_rate = 0;
  VideoFrameSink sink;

  grpc::ClientContext context;
  std::thread call_thread;
  std::thread receive_thread;
  std::atomic<bool> stopping{false};
  std::atomic<bool> force_key{false};
  int fd = -1;
  int wake[2] = {-1, -1};

  mutable std::mutex mutex;  // guards stats
  CameraViewStats stats;
  std::optional<datagram::SessionKeys> keys;

  ~Impl() {
    stopping.store(true);
    context.TryCancel();
    if (wake[1] >= 0) {
      const char byte = 1;
      [[maybe_unused]] const ssize_t n = write(wake[1], &byte, 1);
    }
    if (call_thread.joinable()) call_thread.join();
    if (receive_thread.joinable()) receive_thread.join();
    if (fd >= 0) ::close(fd);
    if (wake[0] >= 0) ::close(wake[0]);
    if (wake[1] >= 0) ::close(wake[1]);
  }

  void end(const std::string& why) {
    std::lock_guard lock(mutex);
    stats.ended = true;
    if (!stopping.load()) stats.error = why;
  }

  // The UDP socket, connected to the site's datagram port: only its datagrams come in.
  std::string open_socket(int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int e = getaddrinfo(connection->host.c_str(), service.c_str(), &hints, &found);
        e != 0) {
      return "cannot resolve '" + connection->host + "': " + gai_strerror(e);
    }
    std::string why = "no address";
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
      const int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
      if (s < 0) continue;
      if (connect(s, a->ai_addr, a->ai_addrlen) == 0) {
        fd = s;
      } else {
        why = std::strerror(errno);
        ::close(s);
      }
    }
    freeaddrinfo(found);
    if (fd < 0) return "cannot reach " + connection->host + ":" + service + ": " + why;
    const int buffer = 4 << 20;  // a key frame's burst
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    return {};
  }

  void call() {
    if (connection->insecure) context.AddMetadata(kOperatorKey, connection->operator_name);
    v1::WatchCameraRequest request;
    request.set_camera(camera);
    request.set_bit_rate_kbps(bit_rate);
    request.set_eye(connection->eye);
    std::unique_ptr<grpc::ClientReader<v1::WatchCameraReply>> reader =
        connection->stub->WatchCamera(&context, request);
    v1::WatchCameraReply reply;
    bool first = true;
    while (reader->Read(&reply)) {
      const std::int64_t now = monotonic_ns();
      if (first) {
        first = false;
        const auto parsed = datagram::keys_from_text(reply.datagram_keys());
        std::string why = parsed ? open_socket(reply.datagram_port()) : "the site sent no keys";
        if (!why.empty()) {
          context.TryCancel();
          end("camera view: " + why);
          return;
        }
        {
          std::lock_guard lock(mutex);
          keys = *parsed;
          stats.open = true;
          stats.codec = reply.codec();
          try {
            stats.camera = proto::to_scene_camera(reply.camera(), "camera");
          } catch (const std::exception&) {
            // Described badly: the view still shows what arrives.
          }
        }
        receive_thread = std::thread([this] { receive(); });
      }
      std::lock_guard lock(mutex);
      stats.sent = reply.frames_sent();
      stats.sent_bytes = reply.bytes_sent();
      stats.encode_ms = reply.encode_ms_mean();
      // NTP's estimate: t1 the feedback left, t2 it arrived at the site, t3 this reply was
      // made there, t4 now.
      const std::int64_t t1 = reply.feedback_ground_ns();
      const std::int64_t t2 = reply.feedback_arrival_ns();
      const std::int64_t t3 = reply.remote_time_ns();
      if (t1 != 0 && t2 != 0 && t3 >= t2 && now >= t1) {
        const std::int64_t round_trip = (now - t1) - (t3 - t2);
        if (round_trip >= 0 && (!stats.clock_known || round_trip <= stats.round_trip_ns)) {
          stats.clock_known = true;
          stats.round_trip_ns = round_trip;
          stats.clock_offset_ns = ((t2 - t1) + (t3 - now)) / 2;
        }
      }
    }
    const grpc::Status status = reader->Finish();
    end(status.ok() ? std::string("the site ended the view")
                    : "camera '" + camera + "': " + status.error_message());
  }

  void send_feedback(datagram::Sealer& sealer, const datagram::FrameAssembler& assembler,
                     bool force_key) {
    datagram::VideoFeedback f;
    f.key_wanted = assembler.key_wanted() || force_key;
    f.newest_frame = assembler.newest();
    f.ground_time_ns = monotonic_ns();
    f.completed = assembler.completed();
    f.lost = assembler.lost();
    std::array<std::uint8_t, datagram::kVideoFeedbackBytes> plain{};
    std::array<std::uint8_t, datagram::kMaxDatagram> sealed{};
    const std::size_t n = datagram::encode(f, plain);
    const std::size_t total = sealer.seal(std::span(plain.data(), n), sealed);
    if (total > 0) [[maybe_unused]]
      const ssize_t sent = ::send(fd, sealed.data(), total, MSG_DONTWAIT);
    if (f.key_wanted) {
      std::lock_guard lock(mutex);
      ++stats.key_requests;
    }
  }

  void receive() {
    datagram::SessionKeys k;
    {
      std::lock_guard lock(mutex);
      k = *keys;
    }
    datagram::Sealer sealer(datagram::Kind::kVideoFeedback, k.session, k.ground_to_remote);
    datagram::Opener opener(datagram::Kind::kVideo, k.session, k.remote_to_ground);
    datagram::FrameAssembler assembler;
    std::array<std::uint8_t, datagram::kMaxVideoDatagram + 1> buffer{};
    std::array<std::uint8_t, datagram::kMaxVideoDatagram> plain{};
    std::array<pollfd, 2> fds{pollfd{fd, POLLIN, 0}, pollfd{wake[0], POLLIN, 0}};
    std::int64_t next_feedback = 0;
    bool wanted_before = false;
    while (!stopping.load()) {
      const std::int64_t now = monotonic_ns();
      const bool forced = force_key.exchange(false);
      if (now >= next_feedback || assembler.key_wanted() != wanted_before || forced) {
        wanted_before = assembler.key_wanted();
        send_feedback(sealer, assembler, forced);
        next_feedback = now + kFeedbackPeriodNs;
      }
      const int timeout_ms = static_cast<int>(
          std::max<std::int64_t>(1, (next_feedback - monotonic_ns() + 999'999) / 1'000'000));
      if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
      if (fds[1].revents != 0) break;
      for (;;) {
        const ssize_t n = recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (n < 0) break;
        const auto size = opener.open(std::span(buffer.data(), static_cast<std::size_t>(n)), plain);
        datagram::VideoFragment fragment;
        if (!size || !datagram::decode(std::span(plain.data(), *size), fragment).empty()) {
          std::lock_guard lock(mutex);
          ++stats.dropped;
          continue;
        }
        std::optional<datagram::AssembledFrame> done = assembler.take(fragment);
        {
          std::lock_guard lock(mutex);
          stats.bytes += *size;
          stats.lost = assembler.lost();
          stats.repaired = assembler.repaired();
        }
        if (!done) continue;
        if (!done->key && assembler.key_wanted()) {
          std::lock_guard lock(mutex);
          ++stats.held_back;
          continue;
        }
        VideoFrame frame;
        frame.number = done->number;
        frame.key = done->key;
        frame.capture_remote_ns = done->capture_ns;
        frame.arrival_ns = monotonic_ns();
        if (done->pose.known) {
          const auto& q = done->pose.q;
          frame.pose_known = true;
          frame.base_T_camera.p = Vector3(done->pose.p[0], done->pose.p[1], done->pose.p[2]);
          frame.base_T_camera.R =
              Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
        }
        frame.data = std::move(done->data);
        {
          std::lock_guard lock(mutex);
          ++stats.frames;
          if (stats.clock_known)
            frame.capture_ground_ns = frame.capture_remote_ns - stats.clock_offset_ns;
        }
        if (sink) sink(frame);
      }
    }
  }
};

CameraView::CameraView(std::shared_ptr<Connection> connection, std::string camera,
                       int bit_rate_kbps, VideoFrameSink sink)
    : camera_(std::move(camera)), impl_(std::make_unique<Impl>()) {
  impl_->connection = std::move(connection);
  impl_->camera = camera_;
  impl_->bit_rate = bit_rate_kbps;
  impl_->sink = std::move(sink);
  if (pipe2(impl_->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error(std::string("camera view: pipe: ") + std::strerror(errno));
  }
  Impl* raw = impl_.get();
  impl_->call_thread = std::thread([raw] { raw->call(); });
}

CameraView::~CameraView() = default;

void CameraView::request_key_frame() { impl_->force_key.store(true); }

CameraViewStats CameraView::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

}  // namespace tether::local
