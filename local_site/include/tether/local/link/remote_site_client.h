#pragma once

// The ground station's client of one remote site (tether.v1.RemoteSite over gRPC,
// proto/tether/v1/remote_site.proto). Replies arrive as the domain types of site_types.h;
// gRPC and protobuf stay behind this header.
//
// Calls go over mutual TLS (ClientCredentials): the site checks this client's certificate,
// whose common name is the caller's identity, and the client checks the site's certificate
// and name. With `insecure` (a loopback site started --insecure) calls are plaintext and
// name the operator in the "tether-operator" metadata instead. Every call has a deadline
// (ClientOptions::deadline, from the moment the call is made); the telemetry stream has
// none. A call that does not end OK throws RemoteError with gRPC's code and the server's
// message. The remote site decides who may control the arm (the control lease): observing
// calls (status, list, get, subscribe_telemetry) always work, controlling calls of an
// operator not holding the lease fail with kFailedPrecondition naming the holder; anyone
// may stop().
//
// A client owns its channel: several clients, to the same or different sites, coexist in
// one process. Calls on one client may be made from several threads at once.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tether/local/link/camera_view.h"
#include "tether/local/link/site_types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

// gRPC status codes, numbered as gRPC numbers them.
enum class RemoteCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// gRPC's upper-case name: "FAILED_PRECONDITION".
const char* to_string(RemoteCode code);

// A remote call that did not succeed. what() is "<call> on <address>: <CODE>: <message>";
// message() is the server's text alone (for INVALID_ARGUMENT one problem per line, each
// naming the field, the value and the allowed range).
class RemoteError : public std::runtime_error {
 public:
  RemoteError(const std::string& call, const std::string& address, RemoteCode code,
              const std::string& message);
  RemoteCode code() const { return code_; }
  const char* code_name() const { return to_string(code_); }
  const std::string& message() const { return message_; }
  // The site could not be reached in time (UNAVAILABLE or DEADLINE_EXCEEDED).
  bool unreachable() const;

 private:
  RemoteCode code_;
  std::string message_;
};

// "$USER@hostname" ("operator@hostname" without USER).
std::string default_operator_name();

// How a client proves who it is and checks the site (paths to PEM files).
struct ClientCredentials {
  bool insecure = false;    // plaintext, identity self-declared: loopback development only
  std::string ca;           // the CA the site's certificate must chain to
  std::string cert;         // this operator's certificate: its CN is the identity
  std::string key;          // its private key
  std::string server_name;  // the name the site's certificate must carry, when not the
                            // address's host (a proxy or tunnel in between)
};

struct ClientOptions {
  std::string operator_name;                 // insecure only; empty: default_operator_name()
  std::chrono::milliseconds deadline{5000};  // per unary call
  ClientCredentials credentials;
};

// A blocking reader of the telemetry stream. Samples are buffered between next() calls (up
// to kMaxBuffered, older ones dropped and counted) by a reader thread that the
// subscription owns; cancel() or destruction ends the stream.
class TelemetrySubscription {
 public:
  enum class Next {
    kSample,   // `sample` holds the next sample
    kTimeout,  // nothing arrived within the timeout; the stream is still open
    kEnded,    // the stream is over (cancelled or closed by the server without error)
  };
  static constexpr std::size_t kMaxBuffered = 65536;

  TelemetrySubscription(TelemetrySubscription&&) noexcept;
  TelemetrySubscription& operator=(TelemetrySubscription&&) noexcept;
  ~TelemetrySubscription();

  // Waits up to `timeout` for a sample. Throws RemoteError once the buffer is drained if the
  // stream failed (e.g. UNAVAILABLE when the site went away).
  Next next(TelemetrySample& sample, std::chrono::milliseconds timeout);
  // Ends the stream; a blocked next() returns kEnded once the buffer is drained. Idempotent.
  void cancel();
  std::uint64_t dropped() const;

  struct State;  // implementation (link/remote_site_client.cc)
  explicit TelemetrySubscription(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

class SessionRecorder;

// The black box's segments (FetchBlackBox, docs/recordings.md).
struct BlackBoxSegmentInfo {
  std::string name;  // the segment's file name on the site
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;
  std::uint64_t bytes = 0;
  std::vector<std::string> breaches;  // breach ids it is kept for
  bool complete = false;              // closed with its summary (false: recovered)
};
struct BlackBoxQuery {
  bool all = false;                     // every segment kept
  bool list_only = false;               // the segments, not their bytes
  std::optional<std::int64_t> unix_ns;  // around this time [ns since the epoch]
  std::string breach_id;                // or around this breach
  double before = 0.0;                  // [s] wanted before it; 0: the site's default (120)
  double after = 0.0;                   // [s] after it; 0: the site's default (30)
};

class RemoteSiteClient {
 public:
  // `address` is "host:port". Connecting is lazy: an unreachable site shows up as a
  // RemoteError (kUnavailable or kDeadlineExceeded) from the first call.
  explicit RemoteSiteClient(std::string address, const ClientOptions& options = {});
  ~RemoteSiteClient();
  RemoteSiteClient(const RemoteSiteClient&) = delete;
  RemoteSiteClient& operator=(const RemoteSiteClient&) = delete;

  const std::string& address() const;
  // The identity the site sees: the certificate's CN, or the declared name if insecure.
  const std::string& operator_name() const;

  SiteStatus status();
  // Takes the control lease; returns the operator now holding it (this one). `force`
  // (admins only) takes it from another holder, stopping a running task.
  std::string acquire_control(bool force = false);
  void release_control();

  // Stores `task` on the site under `name` ([A-Za-z0-9_.-]{1,64}); `replace` overwrites a
  // stored set of that name. The site validates it against its arm first.
  UploadResult upload(const std::string& name, const TaskParameters& task, bool replace);
  std::vector<TaskSummary> list();
  // The stored set and its summary.
  std::pair<TaskSummary, TaskParameters> get(const std::string& name);
  void remove(const std::string& name);

  // Starts a stored set from the arm's current pose; returns the task id.
  std::uint64_t start(const std::string& name);
  // Controlled stop of whatever runs (latched until reset); returns the state after it.
  ExecutorState stop();
  // Clears a latched stop; a refusal (the breach persists) comes back as accepted = false
  // with the site's reason.
  ResetResult reset();
  // Moves a stopped arm out of its breach (joint-limit margin, proximity window, singular
  // resolver); returns at once with the recovery started (status().recovery follows it).
  // A refusal throws RemoteError (kFailedPrecondition) naming the direction that would
  // deepen the breach.
  RecoveryStatus recover(const RecoveryMotion& motion);
  // Replaces the running task's parameters without restarting it; returns its id.
  std::uint64_t update(const TaskParameters& task);
  // One field of the running task: `path` dot-separated in tether.v1.TaskParameters
  // ("force_control.reference_wrench.torque.x"), `value` in protobuf text format ("18").
  std::uint64_t set_parameter(const std::string& path, const std::string& value);
  // Several fields (path, value) in one update: the running task takes all of them in one
  // control cycle, or none (e.g. teleoperation.world_R_eye with teleoperation.eye_time_ns).
  std::uint64_t set_parameters(const std::vector<std::pair<std::string, std::string>>& fields);

  // Lines [first, first + max) of the site's audit trail (JSON objects), and the index
  // after the last one returned.
  std::vector<std::string> audit(std::uint64_t first, std::uint32_t max, std::uint64_t& next);

  // Every `decimation`-th control cycle (0 or 1: every cycle).
  TelemetrySubscription subscribe_telemetry(std::uint32_t decimation);
  // Records task sets uploaded, started and changed, and the telemetry of subscriptions made
  // from now on, into `recorder` (nullptr: none). It must outlive them.
  void set_recorder(SessionRecorder* recorder);
  // Streams the black box's segments `query` selects: for each, on_segment, then its bytes
  // in order through on_data (the last piece with last = true). Listing only: on_segment.
  void fetch_black_box(const BlackBoxQuery& query,
                       const std::function<void(const BlackBoxSegmentInfo&)>& on_segment,
                       const std::function<void(const std::string& data, bool last)>& on_data);
  // A full-rate telemetry stream that only feeds `recorder` (next() sees nothing).
  TelemetrySubscription record_telemetry(SessionRecorder& recorder);

  // Watches camera `camera` of the site (SiteStatus::scene.cameras): its video at
  // `bit_rate_kbps` (0: the site's default) to `sink` while the view lives
  // (tether/local/link/camera_view.h). `eye`: camera-mode teleoperation sees through this
  // camera while the view lives (WatchCameraRequest.eye; needs the lease).
  std::unique_ptr<CameraView> watch_camera(const std::string& camera, int bit_rate_kbps,
                                           VideoFrameSink sink, bool eye = false);
  // Aims the pan-tilt head carrying `camera` [deg] (AimCamera; needs the lease). Throws
  // RemoteError with the site's reason when refused.
  void aim_camera(const std::string& camera, double pan_deg, double tilt_deg);

 private:
  TelemetrySubscription open_telemetry(std::uint32_t decimation, SessionRecorder* recorder,
                                       bool keep);
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tether::local
