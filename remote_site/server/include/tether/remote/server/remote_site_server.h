#pragma once

// The remote site's gRPC server (tether.v1.RemoteSite, proto/tether/v1/remote_site.proto),
// the standard grpc.health.v1 health service and server reflection, in front of a running
// executor and control loop. Task sets, starts, stops, resets and parameter updates go to
// the executor through its lock-free hand-offs; hand-controller increments go into the
// teleoperation queue; every control cycle comes back out as telemetry and force
// reflection. Nothing here runs on the control-loop thread.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tether/common/scene_description.h"
#include "tether/remote/camera/camera_device.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"

namespace tether::remote {

// Who may connect (mutual TLS) and what each identity may do (remote_site/server/src/
// site_security.h). Paths to PEM files and the roles file; reloaded on SIGHUP.
struct SecurityOptions {
  bool insecure = false;  // plaintext with self-declared names; loopback addresses only
  std::string ca;         // the CA that issues callers' certificates (and signs the CRL)
  std::string cert;       // this site's certificate (chain)
  std::string key;        // its private key (unencrypted PEM)
  std::string crl;        // revoked certificates (PEM CRL); empty: none
  std::string roles;      // identity -> role; required unless insecure
};

// Limits per identity (a caller's certificate CN); beyond them, RESOURCE_EXHAUSTED.
struct QuotaOptions {
  int max_streams = 4;  // concurrent telemetry and teleoperation streams
  // Concurrent camera views (WatchCamera), counted apart from the streams: an operator with
  // telemetry, teleoperation and a stereo pair needs both. Each view renders (in simulation)
  // and encodes: about a sixth of a core per 640×480 camera at 15 Hz on a 2-core machine.
  int max_camera_views = 4;
  double uploads_per_second = 2.0;  // sustained rate of UploadTask
  int upload_burst = 10;            // uploads allowed at once before the rate applies
  // Sustained rate of SetParameter and calls allowed at once: a camera arm streams its EYE
  // frame at up to 100 Hz (teleoperation.world_R_eye), with room for the operator's own.
  double parameters_per_second = 200.0;
  int parameter_burst = 100;
  std::size_t telemetry_queue = 2000;  // samples waiting for a slow reader, then dropped
};

// The black box (remote_site/server/src/black_box.h, docs/recordings.md): the last minutes of
// every cycle, increment, breach and audit line, a ring of MCAP segments on disk.
struct BlackBoxOptions {
  std::string directory;              // empty: no black box
  double window = 600.0;              // [s] of history kept
  std::uint64_t budget = 1ULL << 30;  // [bytes] on disk, breaches' segments included
  double segment = 30.0;              // [s] a segment is closed after
  double sync_interval = 1.0;         // [s] the most a crash of the process loses
  std::size_t keep_breaches = 10;     // breaches whose segments outlive the window
};

struct ServerOptions {
  std::string address = "127.0.0.1:50051";  // host:port; port 0 picks a free one
  std::string site_name = "remote";
  std::string arm_link = "embedded simulation";  // for status: what the executor drives
  std::string task_directory;                    // empty: uploaded sets live in memory only
  double lease_timeout = 5.0;                    // [s] of silence before control lapses
  SecurityOptions security;
  std::string audit_file;  // JSON lines, appended and fsync'd; empty: the log only
  QuotaOptions quotas;
  int loop_cpu = -1;  // the CPU the control loop is pinned to; −1: not pinned
  // What the arm works in, reported in status (an embedded simulation's scene); none: the
  // site does not say.
  std::optional<SceneDescription> scene;
  // The cameras WatchCamera serves (the embedded simulation's, or a real site's drivers);
  // none: WatchCamera answers UNAVAILABLE. Not owned; outlives the server.
  camera::CameraDevices* cameras = nullptr;
  RecoveryLimits recovery;  // recovery motion's speeds (executor.h)
  // The teleoperation datagram plane's UDP port, on the host of `address`: 0 the bound
  // gRPC port's number (any free port if that one is taken), −1 none (the stream only).
  int datagram_port = 0;
  BlackBoxOptions black_box;
};

class RemoteSiteServer {
 public:
  // Starts serving at once. `executor`, `loop` and `queue` (the executor's teleoperation
  // queue; the server is its only producer) must outlive the server. Throws
  // std::runtime_error when the address cannot be bound.
  RemoteSiteServer(const ServerOptions& options, Executor& executor, ControlLoop& loop,
                   HandControllerQueue& queue, const std::string& arm_name);
  ~RemoteSiteServer();
  RemoteSiteServer(const RemoteSiteServer&) = delete;
  RemoteSiteServer& operator=(const RemoteSiteServer&) = delete;

  int port() const;
  int datagram_port() const;  // −1 without the datagram plane
  // Re-reads the roles file, the CRL and the certificates (SIGHUP). Returns what is now in
  // force; throws std::runtime_error, keeping the previous configuration, on a bad file.
  std::string reload_security();
  // Ends every stream and stops serving; called by the destructor.
  void shutdown();

  struct Impl;  // the service and its streams, in remote_site_server.cc

 private:
  std::unique_ptr<Impl> impl_;
};

// Runs a remote site until SIGINT or SIGTERM (or `duration` seconds, if positive): the
// real-time control loop on `arm`, the executor and the server. On the way out it stops
// the arm in a controlled way before the loop ends. `on_serving` is called once with the
// bound port. Blocks SIGINT and SIGTERM in the calling thread, so call it before starting
// other threads. Returns the process exit status.
int serve_remote_site(ArmInterface& arm, const ServerOptions& options, double duration,
                      const std::function<void(int port)>& on_serving);

}  // namespace tether::remote
