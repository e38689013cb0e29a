#pragma once

// The remote site's end of the data plane (tether/datagram/teleop_datagram.h and
// video_datagram.h): one UDP socket, by default on the gRPC port's number, and the sessions
// the Teleoperate streams and WatchCamera calls open on it. A thread of its own receives: it finds
// each datagram's session by its id, authenticates and decodes it, learns (and follows, after NAT
// rebinding) the ground's address from authentic datagrams only, and hands the increment to the
// session's stream. The stream's reflections go back from the telemetry hub's thread.
//
// Nothing here runs in the control cycle; a session's callback runs on the receiving
// thread with the endpoint's lock held, so closing a session waits for a callback in
// progress and none runs after close() returns.

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include "tether/datagram/teleop_datagram.h"
#include "tether/datagram/video_datagram.h"

namespace tether::remote::server {

// What one session's datagrams did, both directions.
struct DatagramSessionStats {
  std::uint64_t received = 0;  // increment datagrams accepted (authentic, new, valid)
  datagram::DropCounters drops;
  std::uint64_t sent = 0;            // reflection datagrams sent
  std::uint64_t send_errors = 0;     // the socket refused one
  std::uint64_t rebinds = 0;         // the ground's address changed (NAT rebinding)
  std::int64_t last_arrival_ns = 0;  // CLOCK_MONOTONIC of the newest accepted, 0 none
  std::string peer;                  // the ground's address as last learnt, empty if none
};

class DatagramEndpoint {
 public:
  // Receives each authentic increment and its arrival (CLOCK_MONOTONIC [ns]), or an
  // authentic datagram whose values are out of range (`problem` non-empty).
  using OnIncrement = std::function<void(const datagram::IncrementMessage& message,
                                         std::int64_t arrival_ns, const std::string& problem)>;

  // Receives each authentic feedback datagram of a camera view and its arrival.
  using OnFeedback =
      std::function<void(const datagram::VideoFeedback& feedback, std::int64_t arrival_ns)>;

  // Binds UDP on host:port (port 0: any). Throws std::runtime_error naming the address.
  DatagramEndpoint(const std::string& host, int port);
  ~DatagramEndpoint();
  DatagramEndpoint(const DatagramEndpoint&) = delete;
  DatagramEndpoint& operator=(const DatagramEndpoint&) = delete;

  int port() const { return port_; }
  // A new session with fresh keys; its increments go to `on_increment` until close().
  datagram::SessionKeys open(OnIncrement on_increment);
  // A camera view's session (video_datagram.h): its feedback to `on_feedback`, video sent
  // with send_video() once the ground's first feedback told where it is.
  datagram::SessionKeys open_video(OnFeedback on_feedback);
  bool send_video(std::uint32_t session, std::span<const std::uint8_t> payload);
  void close(std::uint32_t session);
  // Seals and sends a reflection to the session's ground; false if its address is not
  // known yet, the session is closed or the socket refused it.
  bool send(std::uint32_t session, const datagram::ReflectionMessage& message);
  DatagramSessionStats stats(std::uint32_t session) const;
  // Datagrams that named no open session or were not ours at all.
  std::uint64_t strays() const { return strays_.load(); }

 private:
  struct Session;
  void receive_loop();

  int fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};  // a pipe that ends the receiving thread's poll
  mutable std::mutex mutex_;
  std::map<std::uint32_t, std::shared_ptr<Session>> sessions_;
  std::atomic<std::uint64_t> strays_{0};
  std::thread thread_;
};

}  // namespace tether::remote::server
