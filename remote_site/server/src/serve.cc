#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include "tether/remote/server/remote_site_server.h"

namespace tether::remote {

int serve_remote_site(ArmInterface& arm, const ServerOptions& options, double duration,
                      const std::function<void(int port)>& on_serving) {
  // Threads started from here on inherit the mask, so only sigtimedwait sees the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // reload roles, CRL and certificates
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  HandControllerQueue queue;
  Executor executor(arm.model(), queue);
  executor.set_recovery_limits(options.recovery);
  ControlLoop loop(arm, executor, Pacing::kRealTime);
  loop.set_record_telemetry(true);
  loop.set_cpu(options.loop_cpu);
  loop.start();
  // The loop thread records what real-time set-up it got before its first cycle.
  loop.wait_for_cycle(0);
  if (const std::string refused = realtime::describe_refusals(loop.realtime_grant());
      !refused.empty()) {
    spdlog::warn("control loop: {}", refused);
  }
  int status = 0;
  {
    RemoteSiteServer server(options, executor, loop, queue, arm.model().name);
    if (on_serving) on_serving(server.port());

    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(duration > 0.0 ? duration : 1e9));
    while (true) {
      const auto left = end - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) break;
      const auto slice =
          std::min<std::chrono::steady_clock::duration>(left, std::chrono::seconds(1));
      timespec timeout{};
      timeout.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(slice).count();
      timeout.tv_nsec =
          std::chrono::duration_cast<std::chrono::nanoseconds>(slice).count() % 1000000000LL;
      const int received = sigtimedwait(&signals, nullptr, &timeout);
      if (received == SIGINT || received == SIGTERM) {
        spdlog::info("signal {}: stopping the arm and shutting down", received);
        break;
      }
      if (received == SIGHUP) {
        try {
          server.reload_security();
        } catch (const std::exception& e) {
          spdlog::error("SIGHUP: reload refused, the previous configuration stays: {}", e.what());
        }
      }
    }
    // Controlled stop before the loop ends, so the arm is at rest when commands cease.
    const ExecutorState state = executor.status().state;
    if (state == ExecutorState::kRunning || state == ExecutorState::kRecovering) {
      executor.request_stop(BreachCause::kOperatorStop);
      const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (executor.status().state != ExecutorState::kStopped &&
             std::chrono::steady_clock::now() < limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    server.shutdown();
  }
  loop.stop();
  const LoopStatistics& st = loop.statistics();
  spdlog::info("control loop: {} cycles, {} overruns, period jitter p99 {:.1f} us", st.cycles,
               st.overruns, st.period_jitter.percentile(99) * 1e6);
  return status;
}

}  // namespace tether::remote
