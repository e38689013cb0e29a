#pragma once

// One teleoperation session: the ground half of the teleoperation link to one remote site.
// A thread samples the operator's hand controller at a fixed rate (1 kHz by default, on
// absolute CLOCK_MONOTONIC deadlines), sends each sample as a numbered increment on the
// Teleoperate stream (tether.v1.RemoteSite), and renders the newest force reflection on
// the hand controller's actuators; a second thread reads the reflection stream.
//
// Latency is measured per increment: from the moment it was sampled to the arrival of the
// first reflection reporting it applied by the remote executor — hand-controller sample →
// command applied at the remote → reflected force back at the ground.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tether/local/hand_controller/operator_input.h"
#include "tether/local/link/remote_site_client.h"
#include "tether/local/link/site_types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

struct TeleopOptions {
  std::string address;            // remote site, host:port
  std::string operator_name;      // insecure only: sent as tether-operator
  ClientCredentials credentials;  // the identity that must hold (or get) the lease
  double rate = 1000.0;           // [Hz] increments per second, in [10, 5000]
  double duration = 0.0;          // [s]; 0 = until stop() or the device ends
  bool realtime = true;           // try SCHED_FIFO for the sampling thread
};

// A force-reflection sample as the ground sees it.
struct ReflectionSample {
  std::uint64_t cycle = 0;
  double task_time = 0.0;              // [s]
  std::uint64_t applied_sequence = 0;  // newest of our increments the executor applied
  TeleopMode mode = TeleopMode::kTool;
  // Robot-on-environment wrench F_a and F_r − F_a at the MOTION origin, in the hand
  // controller's axes of `mode` [N, N·m].
  Vector6 measured = Vector6::Zero();
  Vector6 tracking_error = Vector6::Zero();
  ExecutorState state = ExecutorState::kUnspecified;  // the remote executor's
  Breach breach;                                      // latched breach, if any
  TeleoperationCounters teleoperation;                // the remote's applied/lost/duplicates
};

struct TeleopReport {
  std::uint64_t sent = 0;         // increments written
  std::uint64_t reflections = 0;  // reflection samples received
  std::uint64_t measured = 0;     // increments whose round trip was measured
  double latency_p50 = 0.0;       // [s] sample → applied → reflected
  double latency_p99 = 0.0;
  double latency_max = 0.0;
  double peak_force = 0.0;    // [N] |F_a| seen in reflections
  double peak_torque = 0.0;   // [N·m]
  ReflectionSample last;      // includes the remote's applied/lost/duplicate counts
  std::string stream_status;  // "OK" or the code and message the stream ended with
  bool ok = false;            // stream ended with OK
};

class TeleopSession {
 public:
  // `input` must outlive the session; only the session's thread uses it while running.
  // Throws std::invalid_argument for bad options (naming the field, value and range).
  TeleopSession(OperatorInput& input, const TeleopOptions& options);
  ~TeleopSession();
  TeleopSession(const TeleopSession&) = delete;
  TeleopSession& operator=(const TeleopSession&) = delete;

  // Opens the stream and starts sampling.
  void start();
  // Ends the stream cleanly (the remote's stall timeout then stops a teleoperated task).
  void stop();
  // Blocks until the session ends (duration, device end, stop() or the remote ended it).
  TeleopReport wait();
  bool finished() const { return finished_.load(); }

  // Thread-safe snapshots while running.
  ReflectionSample latest_reflection() const;
  std::uint64_t sent() const { return sent_.load(); }

 private:
  struct Stream;
  void sample_loop();
  void read_loop();
  TeleopReport build_report();

  OperatorInput& input_;
  TeleopOptions options_;
  std::unique_ptr<Stream> stream_;
  std::thread sampler_;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<std::uint64_t> sent_{0};

  // Sampling times by sequence (a ring long enough for any in-flight window).
  static constexpr std::size_t kSendRing = 1 << 16;
  std::unique_ptr<std::atomic<std::int64_t>[]> send_time_ns_;

  mutable std::mutex mutex_;  // guards what the reader shares
  ReflectionSample latest_;
  std::uint64_t reflections_ = 0;
  std::uint64_t measured_up_to_ = 0;
  std::vector<double> latencies_;
  double peak_force_ = 0.0;
  double peak_torque_ = 0.0;
  std::string stream_status_;
  bool stream_ok_ = false;
};

}  // namespace tether::local
