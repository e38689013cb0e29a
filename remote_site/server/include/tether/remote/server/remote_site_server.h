#pragma once

// The remote site's gRPC server (tether.v1.RemoteSite, proto/tether/v1/remote_site.proto),
// the standard grpc.health.v1 health service and server reflection, in front of a running
// executor and control loop. Task sets, starts, stops, resets and parameter updates go to
// the executor through its lock-free hand-offs; hand-controller increments go into the
// teleoperation queue; every control cycle comes back out as telemetry and force
// reflection. Nothing here runs on the control-loop thread.

#include <functional>
#include <memory>
#include <string>

#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"

namespace tether::remote {

struct ServerOptions {
  std::string address = "127.0.0.1:50051";  // host:port; port 0 picks a free one
  std::string site_name = "remote";
  std::string arm_link = "embedded simulation";  // for status: what the executor drives
  std::string task_directory;                    // empty: uploaded sets live in memory only
  double lease_timeout = 5.0;                    // [s] of silence before control lapses
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
