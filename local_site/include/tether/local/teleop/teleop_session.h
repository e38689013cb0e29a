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

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tether/common/teleop_channel.h"
#include "tether/common/vocabulary.h"
#include "tether/local/hand_controller/operator_input.h"
#include "tether/local/link/remote_site_client.h"
#include "tether/local/link/site_types.h"
#include "tether/local/teleop/local_model.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

struct TeleopOptions {
  std::string address;            // remote site, host:port
  std::string operator_name;      // insecure only: sent as tether-operator
  ClientCredentials credentials;  // the identity that must hold (or get) the lease
  double rate = 1000.0;           // [Hz] increments per second, in [10, 5000]
  double duration = 0.0;          // [s]; 0 = until stop() or the device ends
  bool realtime = true;           // try SCHED_FIFO for the sampling thread
  // [s] after the device ends (a script's `end`), the stream stays open with the switch held
  // and no motion until the remote has played out every increment, and this long more, so
  // the last motion is not cut short by the link's delay; at most 30 s in all.
  double settle = 0.5;
  // The plane increments and reflections travel on (tether/datagram/teleop_datagram.h):
  // kDatagram asks the site for a datagram session on the stream and sends by UDP once its
  // keys arrive, the stream staying the control plane and the fallback; kStream keeps
  // everything on the stream.
  DataPlane plane = DataPlane::kDatagram;
  // [s] how long to wait for the site's connection (TCP and TLS handshakes: three round
  // trips and more on a lossy path of seconds).
  double connect_timeout = 30.0;
};

// What the datagram plane did in a session (ground side).
struct DatagramReport {
  bool offered = false;          // the site handed out keys
  std::string peer;              // where the increments went
  std::uint64_t sent = 0;        // increment datagrams
  std::uint64_t bytes_sent = 0;  // UDP payload bytes
  std::uint64_t received = 0;    // authentic reflection datagrams
  std::uint64_t bytes_received = 0;
  std::uint64_t dropped = 0;            // forged, replayed, malformed or invalid reflections
  std::uint64_t stream_increments = 0;  // sent on the stream (before keys, or after a fallback)
  std::string fallback;  // why the session went back to the stream; empty: it did not
};

// The ground's side of the force-reflection channel after a sample (teleop_channel.h).
struct MasterChannel {
  PortEnergies energies;           // the hand-controller port [J]
  Vector6 wave = Vector6::Zero();  // wave method: forward wave u_m, the mode's axes [√W]
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
  // F_a along the directions the hand drives (the task's reflection.all_axes), same axes:
  // what the hand renders.
  Vector6 reflected = Vector6::Zero();
  // Camera mode: the EYE frame (EYE axes in WORLD) the remote's cycle rotated these wrenches
  // and mapped its increments with, and its stamp (teleoperation.eye_time_ns, the setter's
  // clock; 0 not stamped). has_eye is false in the other modes.
  bool has_eye = false;
  Matrix3 world_R_eye = Matrix3::Identity();
  std::uint64_t eye_time_ns = 0;
  ExecutorState state = ExecutorState::kUnspecified;  // the remote executor's
  Breach breach;                                      // latched breach, if any
  TeleoperationCounters teleoperation;                // the remote's applied/lost/duplicates
  // Delay-robust reflection (teleop_channel.h): the task's method, the remote port's
  // cumulative input energy, the returning wave (mode axes) and the wave impedance, and
  // both ports' energies as the remote last saw them.
  ReflectionMethod reflection = ReflectionMethod::kNone;
  double slave_in = 0.0;
  Vector6 return_wave = Vector6::Zero();
  WaveImpedance wave_impedance;
  remote::ChannelEnergies channel;
  // For the link estimate: when the remote received the echoed increment and sent this
  // reflection, on its CLOCK_MONOTONIC [ns]; 0 when it did not say.
  std::int64_t increment_arrival_ns = 0;
  std::int64_t remote_time_ns = 0;
};

// One row of the session's record, every 20 ms: what the plots show.
struct TeleopTrace {
  double time = 0.0;                     // [s] since the stream opened
  double model_aux0 = std::nan("");      // [rad] the local model's own door angle, if any
  double predicted_aux0 = std::nan("");  // [rad] the same, corrected by remote telemetry
  double remote_force = 0.0;             // [N] |force of F_a| as last received
  double rendered_force = 0.0;           // [N] |force| rendered on the operator's hand
  double remote_torque = 0.0;            // [N·m] |torque of F_a| as last received
  double rendered_torque = 0.0;          // [N·m] |torque| rendered on the operator's hand
  PortEnergies master;                   // this side's port
  PortEnergies slave;                    // the remote's port, as last received
  bool enabled = false;                  // the operator's enabling switch
};

struct TeleopReport {
  std::uint64_t sent = 0;         // increments written
  std::uint64_t reflections = 0;  // reflection samples received
  std::uint64_t measured = 0;     // increments whose round trip was measured (taken in turn)
  double latency_p50 = 0.0;       // [s] sample → applied → reflected
  double latency_p99 = 0.0;
  double latency_max = 0.0;
  double peak_force = 0.0;   // [N] |F_a| seen in reflections
  double peak_torque = 0.0;  // [N·m]
  // Passivity of the channel (teleop_channel.h): the least observed energy of each port
  // over the session (passive: ≥ −0.01 J) and what each passivity controller dissipated.
  ReflectionMethod reflection = ReflectionMethod::kNone;
  double min_master_observed = 0.0;   // [J]
  double min_slave_observed = 0.0;    // [J]
  double master_dissipated = 0.0;     // [J]
  double slave_dissipated = 0.0;      // [J]
  double peak_rendered_torque = 0.0;  // [N·m] on the operator's hand
  // The link as the stream's timestamps measure it (NTP-style, from the increments' send and
  // arrival times and the reflections' send and arrival times, best of the session): the
  // one-way delay and the remote clock's offset from the ground's [s].
  double one_way_delay = 0.0;
  double clock_offset = 0.0;
  bool link_estimated = false;
  // The local model's (LocalModel) door angle at the end [rad], corrected by the remote's
  // telemetry, and how well it predicted over the session; NaN and empty without one.
  double predicted_aux0 = std::nan("");
  PredictionError prediction;
  std::vector<TeleopTrace> trace;
  // The last reflection; its counters (applied, lost, duplicates, discarded, stale) are
  // this session's: the remote's, which run over the site's life, less those it reported
  // when the stream opened.
  ReflectionSample last;
  // The plane the session ended on, and what its datagrams did.
  DataPlane plane = DataPlane::kStream;
  DatagramReport datagrams;
  std::string stream_status;  // "OK" or the code and message the stream ended with
  bool ok = false;            // stream ended with OK
};

// How many increments one sample's motion goes as: the fewest within kMaxIncrement* each
// (tether/common/teleop_channel.h), at most kMaxIncrementPieces (64 cm or 6.4 rad, a pause
// of seconds); a sample beyond that, or not finite, goes as one, which the remote refuses.
inline constexpr int kMaxIncrementPieces = 64;
int increment_pieces(const OperatorIncrement& increment);

// What the hand felt of one rendered sample, in remote units: the channel's wrench F_m
// and the coupling damping F_c (ForceReflectionConfig::damping_ratio) were asked for
// together, and the hand's clamp scaled each group (force, torque) of their sum along its
// own direction, so each contributed that factor of itself.
struct FeltShares {
  Vector6 channel = Vector6::Zero();  // the channel's share [N, N·m]: its port's wrench
  // [W] the operator's power into the coupling damping (≥ 0 for a damping against v_m)
  double coupling_power = 0.0;
};
// `rendered`: the wrench the hand rendered (OperatorInput::reflected_wrench), `scale` and
// clamps from `reflection`; v_m the hand's velocity in remote units.
FeltShares felt_shares(const Vector6& rendered, const ForceReflectionConfig& reflection,
                       const Vector6& F_m, const Vector6& F_c, const Vector6& v_m);

class SessionRecorder;

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
  // Ends the stream cleanly: an end, not a stall. The remote plays out the increments in
  // flight, closes the stream once the last is applied, and the arm holds.
  void stop();
  // Cuts the stream off (a remote that does not close it); the remote treats it as a lost
  // link and stops a teleoperated task.
  void cancel();
  // Blocks until the session ends (duration, device end, stop() or the remote ended it).
  TeleopReport wait();
  bool finished() const { return finished_.load(); }
  // True once the operator has enabled (held the deadman while the device was valid).
  bool enabled_once() const { return enabled_once_.load(); }
  // Runs `model` in the sampling thread from now on, fed every increment at once; with
  // `reflect_from_model` the hand feels the model's wrench instead of the remote's delayed
  // one. The model must outlive the session.
  void attach_model(LocalModel* model, bool reflect_from_model);
  // The task this session starts: its reflection channel applies from the next sample, before
  // the remote's reflections (a round trip behind) can say so.
  void set_task(const TaskParameters& task);
  // Records every increment sent and reflection received into `recorder` (nullptr: none);
  // it must outlive the session.
  void set_recorder(SessionRecorder* recorder) { recorder_.store(recorder); }
  // CLOCK_MONOTONIC [ns] of the session's time 0 (TeleopTrace::time), once sampling began.
  std::int64_t start_ns() const { return start_ns_.load(); }

  // Thread-safe snapshots while running.
  ReflectionSample latest_reflection() const;
  std::uint64_t sent() const { return sent_.load(); }
  // CLOCK_MONOTONIC [ns] of the newest reflection from either plane; 0 none yet.
  std::int64_t last_reflection_ns() const {
    return std::max(last_stream_reflection_ns_.load(), last_datagram_reflection_ns_.load());
  }
  // [s] the best round trip measured so far; 0 unknown.
  double round_trip() const { return round_trip_.load(); }

 private:
  struct Stream;
  void sample_loop();
  void read_loop();
  void datagram_loop();
  // One reflection into latest_ and the session's measures (mutex_ held).
  // `skipped`: the site passed increments over since the last one (no round trip).
  void absorb(ReflectionSample sample, std::int64_t arrived, bool from_stream, bool skipped);
  // Whether the sampler sends this sample by datagram (and falls back when it must).
  bool use_datagrams(std::int64_t now);
  TeleopReport build_report();

  OperatorInput& input_;
  TeleopOptions options_;
  std::unique_ptr<Stream> stream_;
  std::thread sampler_;
  std::thread reader_;
  std::thread datagram_reader_;
  // The datagram plane: ready once the keys arrived (the reader thread makes the link);
  // the sampler's choice, and why it went back to the stream.
  std::atomic<bool> datagrams_ready_{false};
  std::atomic<bool> metadata_read_{false};  // the site answered the request (or the stream ended)
  std::atomic<bool> fallen_back_{false};
  std::atomic<std::int64_t> datagrams_since_ns_{0};  // first increment datagram sent
  std::atomic<std::int64_t> last_datagram_reflection_ns_{0};
  std::atomic<std::int64_t> last_stream_reflection_ns_{0};
  std::atomic<double> round_trip_{0.0};  // [s] the best path measured, 0 unknown
  std::uint64_t stream_increments_ = 0;  // the sampler only
  std::string fallback_;                 // mutex_
  std::uint16_t skipped_ = 0;            // the last reflection datagram's lost + stale
  bool skipped_known_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> enabled_once_{false};
  std::atomic<std::int64_t> start_ns_{0};
  std::atomic<LocalModel*> model_{nullptr};
  std::atomic<bool> reflect_from_model_{false};
  std::atomic<int> task_method_{-1};  // ReflectionMethod of the started task; -1: unknown
  // The started task's largest teleoperation gain B_t, translation [N·s/m] and rotation
  // [N·m·s/rad], for the coupling damping; 0 until set_task().
  std::atomic<double> gain_translation_{0.0};
  std::atomic<double> gain_rotation_{0.0};
  // Link estimate (reader thread): the best (least) round trip less the remote's holding.
  double best_path_ = 1e9;
  double one_way_delay_ = 0.0;
  double clock_offset_ = 0.0;
  std::atomic<SessionRecorder*> recorder_{nullptr};
  bool link_estimated_ = false;
  std::atomic<std::uint64_t> sent_{0};
  // The newest sequence whose sampling time is in send_time_ns_, stored before the write
  // that carries it: a reflection of it can come back before sent_ is.
  std::atomic<std::uint64_t> stamped_{0};

  // Sampling times by sequence (a ring long enough for any in-flight window).
  static constexpr std::size_t kSendRing = 1 << 16;
  std::unique_ptr<std::atomic<std::int64_t>[]> send_time_ns_;

  mutable std::mutex mutex_;  // guards what the reader shares
  ReflectionSample latest_;
  std::uint64_t reflections_ = 0;
  TeleoperationCounters first_counters_;  // the site's, in the stream's first reflection
  std::uint64_t measured_up_to_ = 0;
  std::vector<double> latencies_;
  double peak_force_ = 0.0;
  double peak_torque_ = 0.0;
  double min_slave_observed_ = 0.0;
  // Written by the sampling thread only, read after it ended.
  double min_master_observed_ = 0.0;
  double peak_rendered_torque_ = 0.0;
  MasterChannel master_;
  std::vector<TeleopTrace> trace_;
  std::string stream_status_;
  bool stream_ok_ = false;
};

}  // namespace tether::local
