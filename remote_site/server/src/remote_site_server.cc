#include "tether/remote/server/remote_site_server.h"

#include <google/protobuf/descriptor.h>
#include <grpc/support/log.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <Eigen/Geometry>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "audit_log.h"
#include "black_box.h"
#include "callback_order.h"
#include "control_lease.h"
#include "datagram_endpoint.h"
#include "eye_source.h"
#include "quotas.h"
#include "site_security.h"
#include "task_store.h"
#include "telemetry_hub.h"
#include "tether/common/task/field_path.h"
#include "tether/common/units.h"
#include "tether/datagram/video_datagram.h"
#include "tether/proto/convert.h"
#include "tether/proto/set_field.h"
#include "tether/proto/task_io.h"
#include "tether/remote/behaviours/teleoperation/parameters.h"
#include "tether/remote/camera/video_codec.h"
#include "tether/remote/task/validation.h"
#include "tether/v1/remote_site.grpc.pb.h"
#include "wire.h"

namespace tether::remote {

namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;
using grpc::Status;
using grpc::StatusCode;
using server::AuditRecord;
using server::Caller;
using server::ControlLease;
using server::CycleSubscriber;

constexpr const char* kServiceName = "tether.v1.RemoteSite";
constexpr const char* kMethodPrefix = "/tether.v1.RemoteSite/";

// gRPC's own log (handshake refusals among it) goes to the site's log.
void log_from_grpc(gpr_log_func_args* args) {
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      spdlog::error("grpc: {}", args->message);
      break;
    case GPR_LOG_SEVERITY_INFO:
      spdlog::info("grpc: {}", args->message);
      break;
    default:
      spdlog::debug("grpc: {}", args->message);
      break;
  }
}

std::string outcome_of(const Status& status) {
  if (status.ok()) return "OK";
  static constexpr std::array<const char*, 17> kNames = {"OK",
                                                         "CANCELLED",
                                                         "UNKNOWN",
                                                         "INVALID_ARGUMENT",
                                                         "DEADLINE_EXCEEDED",
                                                         "NOT_FOUND",
                                                         "ALREADY_EXISTS",
                                                         "PERMISSION_DENIED",
                                                         "RESOURCE_EXHAUSTED",
                                                         "FAILED_PRECONDITION",
                                                         "ABORTED",
                                                         "OUT_OF_RANGE",
                                                         "UNIMPLEMENTED",
                                                         "INTERNAL",
                                                         "UNAVAILABLE",
                                                         "DATA_LOSS",
                                                         "UNAUTHENTICATED"};
  const auto code = static_cast<std::size_t>(status.error_code());
  return std::string(code < kNames.size() ? kNames[code] : "UNKNOWN") + ": " +
         status.error_message();
}

// What a handler adds to its audit record.
struct CallRecord {
  std::string task;
  std::uint64_t revision = 0;
  std::string detail;
  bool renewal = false;  // the call renewed the lease its caller already held (admit)
};

// How a unary method is admitted beyond its role.
enum class Access {
  kRole,     // the role suffices (observing calls, stop)
  kControl,  // also the control lease, taken or renewed by the call
};

// Maps a set-up exception to the status the contract promises.
template <typename Function>
Status guarded(Function&& function) {
  try {
    return function();
  } catch (const TaskValidationError& e) {
    return Status(StatusCode::INVALID_ARGUMENT, e.what());
  } catch (const proto::ConversionError& e) {
    return Status(StatusCode::INVALID_ARGUMENT, e.what());
  } catch (const server::TaskStoreError& e) {
    switch (e.kind()) {
      case server::TaskStoreError::Kind::kInvalidName:
        return Status(StatusCode::INVALID_ARGUMENT, e.what());
      case server::TaskStoreError::Kind::kExists:
        return Status(StatusCode::ALREADY_EXISTS, e.what());
      case server::TaskStoreError::Kind::kNotFound:
        return Status(StatusCode::NOT_FOUND, e.what());
      case server::TaskStoreError::Kind::kIo:
        return Status(StatusCode::INTERNAL, e.what());
    }
    return Status(StatusCode::INTERNAL, e.what());
  } catch (const std::logic_error& e) {
    return Status(StatusCode::FAILED_PRECONDITION, e.what());
  } catch (const std::exception& e) {
    return Status(StatusCode::INTERNAL, e.what());
  }
}

}  // namespace

struct RemoteSiteServer::Impl final : v1::RemoteSite::CallbackService {
  struct RunningTask {
    std::uint64_t id = 0;
    std::string name;
    std::uint64_t revision = 0;  // of the stored set it was started from
    TaskParameters task;
    std::vector<v1::Behaviour> behaviours;
  };

  Impl(const ServerOptions& o, Executor& e, ControlLoop& l, HandControllerQueue& q,
       const std::string& arm)
      : options(o),
        security(o.security, o.address),
        audit(o.audit_file),
        quotas(o.quotas),
        executor(e),
        loop(l),
        queue(q),
        arm_name(arm),
        store(e.model(), o.task_directory),
        lease(std::chrono::duration_cast<ControlLease::Clock::duration>(
            std::chrono::duration<double>(o.lease_timeout))),
        hub(l) {
    security.on_refusal = [this](const Caller& caller, const std::string& method,
                                 const Status& status) {
      const std::string_view prefix = kMethodPrefix;
      if (method.rfind(prefix, 0) != 0) return;  // health and reflection: logged only
      const std::string call = method.substr(prefix.size());
      if (!audited(call.c_str())) return;
      record(caller, call.c_str(), CallRecord{}, status);
    };
  }

  // ---- helpers ----
  // The caller's role against the method's, then (for kControl) the control lease. Under
  // TLS the method's role was already checked before the handler ran; with --insecure this
  // is the only check.
  Status admit(const Caller& caller, const char* method, Access access, bool* renewal = nullptr) {
    const Role needed = server::required_role(std::string(kMethodPrefix) + method);
    if (caller.role < needed) {
      return Status(StatusCode::PERMISSION_DENIED, "'" + caller.identity + "' (role " +
                                                       to_string(caller.role) + ") may not call " +
                                                       kMethodPrefix + method +
                                                       ": it needs the role " + to_string(needed));
    }
    if (access != Access::kControl) return Status::OK;
    if (caller.identity.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "metadata 'tether-operator' is missing: controlling calls name their "
                    "operator");
    }
    auto refusal = lease.claim(caller.identity, ControlLease::Clock::now(), renewal);
    // A lapse this claim noticed goes into the trail before the call's own record.
    audit_lapses();
    if (refusal) return Status(StatusCode::FAILED_PRECONDITION, *refusal);
    remember_holder(caller);
    return Status::OK;
  }

  // The lease's holder as last admitted, so that a lapse is audited with their role.
  void remember_holder(const Caller& caller) {
    std::lock_guard lock(holder_mutex);
    holder_caller = caller;
  }

  // Writes every lapse the lease noticed since the last call: identity the former holder,
  // call "LeaseLapsed". Each lapse is taken from the lease once, so it is written once.
  void audit_lapses() {
    for (const ControlLease::Lapse& lapse : lease.take_lapses()) {
      Caller who;
      {
        std::lock_guard lock(holder_mutex);
        if (holder_caller.identity == lapse.holder) who = holder_caller;
      }
      char detail[256];
      std::snprintf(detail, sizeof detail, "no call from '%s' for %.1f s (lease timeout %g s): ",
                    lapse.holder.substr(0, 128).c_str(),
                    std::chrono::duration<double>(lapse.silent).count(), options.lease_timeout);
      const RunningTask task = running();
      audit.append(AuditRecord{lapse.holder, who.role, who.authenticated, "LeaseLapsed", task.name,
                               task.revision, "OK", std::string(detail) + "the lease lapsed"});
      spdlog::warn("control lease of '{}' lapsed", lapse.holder);
    }
  }

  // The periodic check that notices a lapse when nobody calls: every kLeaseCheck, until
  // stop_lease_watch().
  static constexpr std::chrono::milliseconds kLeaseCheck{100};
  void watch_lease() {
    std::unique_lock lock(watch_mutex);
    while (!watch_wake.wait_for(lock, kLeaseCheck, [this] { return watch_stopping; })) {
      lock.unlock();
      lease.expire(ControlLease::Clock::now());
      audit_lapses();
      lock.lock();
    }
  }
  void stop_lease_watch() {
    {
      std::lock_guard lock(watch_mutex);
      watch_stopping = true;
    }
    watch_wake.notify_all();
    if (lease_watcher.joinable()) lease_watcher.join();
  }

  // Hands a request to the loop (`ask`) and waits up to 2 s for the loop to count its answer
  // in `counter`; `s` is the status with the answer. False: the loop did not answer.
  template <typename Ask>
  bool answered(std::uint64_t ExecutorStatus::*counter, Ask&& ask, ExecutorStatus& s) {
    const std::uint64_t before = executor.status().*counter;
    ask();
    s = executor.status();
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (s.*counter == before && std::chrono::steady_clock::now() < limit) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      s = executor.status();
    }
    return s.*counter != before;
  }

  void record(const Caller& caller, const char* call, const CallRecord& what,
              const Status& status) {
    audit.append(AuditRecord{caller.identity, caller.role, caller.authenticated, call, what.task,
                             what.revision, outcome_of(status), what.detail});
  }

  // Calls that change the site, and stops, are audited; observing calls are not.
  static bool audited(const char* method) {
    const Role needed = server::required_role(std::string(kMethodPrefix) + method);
    return needed >= Role::kOperator || std::string_view(method) == "Stop";
  }

  RunningTask running() {
    std::lock_guard lock(mutex);
    return running_task;
  }

  std::string task_name(std::uint64_t id) {
    std::lock_guard lock(mutex);
    return running_task.id == id ? running_task.name : std::string();
  }

  std::vector<v1::Behaviour> behaviours(std::uint64_t id) {
    std::lock_guard lock(mutex);
    return running_task.id == id ? running_task.behaviours : std::vector<v1::Behaviour>{};
  }

  void submit(const std::string& name, std::uint64_t revision, const TaskParameters& task,
              bool restart, std::uint64_t* id_out) {
    std::lock_guard lock(mutex);
    const std::uint64_t id = executor.submit(task, restart);
    running_task = RunningTask{id, name, revision, task, server::enabled_behaviours(task)};
    *id_out = id;
    if (black_box) black_box->record_task(id, name, revision, task, restart);
  }

  static void summary(const server::StoredTask& stored, v1::TaskSummary* out) {
    out->set_name(stored.name);
    out->set_revision(stored.revision);
    out->set_period_s(stored.task.period);
    for (v1::Behaviour b : server::enabled_behaviours(stored.task)) out->add_behaviours(b);
  }

  // One unary call: size, role and lease checks, the body, the audit record, the answer.
  // `body(caller, record)` returns the status; exceptions map through guarded().
  template <typename Request, typename Body>
  ServerUnaryReactor* unary(CallbackServerContext* context, const char* method, Access access,
                            const Request& request, Body&& body) {
    ServerUnaryReactor* reactor = context->DefaultReactor();
    const Caller caller = security.caller(*context);
    CallRecord what;
    // A call that names a task is audited with it even when it is refused before its body.
    if constexpr (requires(const Request& r) { r.name(); }) {
      what.task = request.name().substr(0, 256);
    }
    Status status = admit(caller, method, access, &what.renewal);
    if (status.ok() && request.ByteSizeLong() > server::max_request_bytes(method)) {
      status =
          Status(StatusCode::RESOURCE_EXHAUSTED,
                 std::string(method) + " request of " + std::to_string(request.ByteSizeLong()) +
                     " bytes: at most " + std::to_string(server::max_request_bytes(method)));
    }
    if (status.ok()) status = guarded([&] { return body(caller, what); });
    // The console renews its lease every 1.5 s while it holds it: such a renewal changes
    // nothing and would flood the trail. A first acquisition, a release, a takeover and a
    // lapse are recorded.
    const bool renewal_only =
        status.ok() && what.renewal && std::string_view(method) == "AcquireControl";
    if (audited(method) && !renewal_only) record(caller, method, what, status);
    reactor->Finish(status);
    return reactor;
  }

  // ---- service ----
  ServerUnaryReactor* GetStatus(CallbackServerContext* context, const v1::GetStatusRequest* request,
                                v1::SiteStatus* reply) override {
    return unary(context, "GetStatus", Access::kRole, *request, [&](const Caller&, CallRecord&) {
      const ExecutorStatus s = executor.status();
      // The loop's own publication of its newest cycle: never older than one period,
      // however many streams the hub serves.
      const CycleTelemetry latest = loop.latest();
      reply->set_site(options.site_name);
      reply->set_arm(arm_name);
      reply->set_arm_link(options.arm_link);
      reply->set_state(proto::from_executor_state(s.state));
      reply->set_task_id(s.task_id);
      reply->set_task_name(task_name(s.task_id));
      server::to_wire(s.breach, reply->mutable_breach());
      reply->set_controller(lease.holder(ControlLease::Clock::now()));
      proto::from_teleoperation_counters(s.teleoperation, 0, reply->mutable_teleoperation());
      v1::LoopTiming* timing = reply->mutable_timing();
      timing->set_period_s(executor.period());
      timing->set_cycles(latest.cycle);
      timing->set_overruns(latest.overruns);
      timing->set_compute_s(latest.compute_time);
      timing->set_wakeup_latency_s(latest.wakeup_latency);
      timing->set_sample_unix_ns(latest.sample_unix_ns);
      proto::from_joint_vector(latest.measured_joints, reply->mutable_measured_joints());
      server::to_wire(s.recovery, executor.recovery_limits(), s.state, reply->mutable_recovery());
      if (options.scene) proto::from_scene(*options.scene, reply->mutable_scene());
      switch (s.last_reset) {
        case ResetOutcome::kPending:
          reply->set_last_reset("none");
          break;
        case ResetOutcome::kAccepted:
          reply->set_last_reset("accepted");
          break;
        case ResetOutcome::kRefusedNotStopped:
          reply->set_last_reset("refused: the executor was not stopped");
          break;
        case ResetOutcome::kRefusedBreach:
          reply->set_last_reset("refused: " + describe(s.reset_refusal) + " persists");
          break;
      }
      return Status::OK;
    });
  }

  ServerUnaryReactor* AcquireControl(CallbackServerContext* context,
                                     const v1::AcquireControlRequest* request,
                                     v1::AcquireControlReply* reply) override {
    // A forced takeover is checked here rather than through the lease, which it overrides.
    const Access access = request->force() ? Access::kRole : Access::kControl;
    return unary(context, "AcquireControl", access, *request,
                 [&](const Caller& caller, CallRecord& what) {
                   if (request->force()) {
                     if (caller.role < Role::kAdmin) {
                       return Status(StatusCode::PERMISSION_DENIED,
                                     "'" + caller.identity + "' (role " + to_string(caller.role) +
                                         ") may not take control over: it needs the role admin");
                     }
                     take_over(caller, what);
                   }
                   reply->set_controller(caller.identity);
                   return Status::OK;
                 });
  }

  ServerUnaryReactor* ReleaseControl(CallbackServerContext* context,
                                     const v1::ReleaseControlRequest* request,
                                     v1::ReleaseControlReply*) override {
    return unary(context, "ReleaseControl", Access::kRole, *request,
                 [&](const Caller& caller, CallRecord&) {
                   // A stream holds the lease: its end releases it, never a call beside it.
                   if (lease.streaming(caller.identity)) {
                     return Status(StatusCode::FAILED_PRECONDITION,
                                   "'" + caller.identity +
                                       "' has a teleoperation stream open; end it to release "
                                       "control");
                   }
                   lease.release(caller.identity);
                   return Status::OK;
                 });
  }

  ServerUnaryReactor* UploadTask(CallbackServerContext* context,
                                 const v1::UploadTaskRequest* request,
                                 v1::UploadTaskReply* reply) override {
    return unary(context, "UploadTask", Access::kControl, *request,
                 [&](const Caller& caller, CallRecord& what) {
                   what.task = request->name();
                   const std::string refusal =
                       quotas.take_upload(caller.identity, server::Quotas::Clock::now());
                   if (!refusal.empty()) return Status(StatusCode::RESOURCE_EXHAUSTED, refusal);
                   TaskParameters task = proto::to_task(request->task());
                   const std::uint64_t revision =
                       store.put(request->name(), task, request->replace());
                   what.revision = revision;
                   reply->set_name(request->name());
                   reply->set_revision(revision);
                   spdlog::info("task '{}' revision {} uploaded by {}", request->name(), revision,
                                caller.identity);
                   return Status::OK;
                 });
  }

  ServerUnaryReactor* ListTasks(CallbackServerContext* context, const v1::ListTasksRequest* request,
                                v1::ListTasksReply* reply) override {
    return unary(context, "ListTasks", Access::kRole, *request, [&](const Caller&, CallRecord&) {
      for (const auto& stored : store.list()) summary(stored, reply->add_tasks());
      return Status::OK;
    });
  }

  ServerUnaryReactor* GetTask(CallbackServerContext* context, const v1::GetTaskRequest* request,
                              v1::GetTaskReply* reply) override {
    return unary(context, "GetTask", Access::kRole, *request, [&](const Caller&, CallRecord&) {
      auto stored = store.get(request->name());
      if (!stored) return Status(StatusCode::NOT_FOUND, "no task named '" + request->name() + "'");
      summary(*stored, reply->mutable_summary());
      *reply->mutable_task() = proto::from_task(stored->task);
      return Status::OK;
    });
  }

  ServerUnaryReactor* DeleteTask(CallbackServerContext* context,
                                 const v1::DeleteTaskRequest* request,
                                 v1::DeleteTaskReply*) override {
    return unary(context, "DeleteTask", Access::kControl, *request,
                 [&](const Caller&, CallRecord& what) {
                   what.task = request->name();
                   store.remove(request->name());
                   return Status::OK;
                 });
  }

  ServerUnaryReactor* StartTask(CallbackServerContext* context, const v1::StartTaskRequest* request,
                                v1::StartTaskReply* reply) override {
    return unary(
        context, "StartTask", Access::kControl, *request,
        [&](const Caller& caller, CallRecord& what) {
          what.task = request->name();
          auto stored = store.get(request->name());
          if (!stored) {
            return Status(StatusCode::NOT_FOUND, "no task named '" + request->name() + "'");
          }
          what.revision = stored->revision;
          std::uint64_t id = 0;
          submit(stored->name, stored->revision, stored->task, true, &id);
          reply->set_task_id(id);
          what.detail = "task #" + std::to_string(id);
          spdlog::info("task '{}' started as #{} by {}", stored->name, id, caller.identity);
          return Status::OK;
        });
  }

  // Every authenticated identity may stop the arm: stopping is never a privilege.
  ServerUnaryReactor* Stop(CallbackServerContext* context, const v1::StopRequest* request,
                           v1::StopReply* reply) override {
    return unary(
        context, "Stop", Access::kRole, *request, [&](const Caller& caller, CallRecord& what) {
          executor.request_stop(BreachCause::kOperatorStop);
          const RunningTask task = running();
          what.task = task.name;
          what.revision = task.revision;
          spdlog::warn("stop requested by {}",
                       caller.identity.empty() ? context->peer() : caller.identity);
          // Reply once the loop has taken the stop (its next cycle), so that what
          // the caller does next — a start, a reset — already sees the stopping arm.
          const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
          ExecutorState state = executor.status().state;
          while ((state == ExecutorState::kRunning || state == ExecutorState::kIdle ||
                  state == ExecutorState::kRecovering) &&
                 std::chrono::steady_clock::now() < limit) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            state = executor.status().state;
          }
          reply->set_state(proto::from_executor_state(state));
          what.detail = std::string("executor ") + to_string(state);
          return Status::OK;
        });
  }

  ServerUnaryReactor* Reset(CallbackServerContext* context, const v1::ResetRequest* request,
                            v1::ResetReply* reply) override {
    return unary(
        context, "Reset", Access::kControl, *request, [&](const Caller&, CallRecord& what) {
          const RunningTask task = running();
          what.task = task.name;
          what.revision = task.revision;
          // A reset during the stop ramp would be refused; wait for the ramp to end.
          const auto wait_limit = std::chrono::steady_clock::now() + std::chrono::seconds(3);
          while (executor.status().state == ExecutorState::kStopping &&
                 std::chrono::steady_clock::now() < wait_limit) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
          ExecutorStatus s;
          if (!answered(
                  &ExecutorStatus::resets_handled, [&] { executor.request_reset(); }, s)) {
            return Status(StatusCode::DEADLINE_EXCEEDED,
                          "the control loop did not answer the reset");
          }
          // A refused reset is an error the caller and the audit trail both see as one.
          if (s.last_reset == ResetOutcome::kRefusedNotStopped) {
            return Status(StatusCode::FAILED_PRECONDITION,
                          "nothing to reset: the executor is " + std::string(to_string(s.state)));
          }
          if (s.last_reset == ResetOutcome::kRefusedBreach) {
            const bool recoverable = s.reset_refusal.cause == BreachCause::kJointLimitMargin ||
                                     s.reset_refusal.cause == BreachCause::kProximityTooClose ||
                                     s.reset_refusal.cause == BreachCause::kProximityTooFar;
            return Status(StatusCode::FAILED_PRECONDITION,
                          describe(s.reset_refusal) + " persists; move out of it first" +
                              (recoverable ? " (Recover: tether recover)" : ""));
          }
          reply->set_accepted(true);
          what.detail = "accepted";
          return Status::OK;
        });
  }

  ServerUnaryReactor* Recover(CallbackServerContext* context, const v1::RecoverRequest* request,
                              v1::RecoverReply* reply) override {
    return unary(
        context, "Recover", Access::kControl, *request,
        [&](const Caller& caller, CallRecord& what) {
          const RunningTask task = running();
          what.task = task.name;
          what.revision = task.revision;
          RecoveryRequest asked;
          if (std::string why = server::from_wire(*request, asked); !why.empty()) {
            return Status(StatusCode::INVALID_ARGUMENT, why);
          }
          // One request at a time reaches the loop (its hand-off has one writer).
          std::lock_guard lock(recovery_mutex);
          ExecutorStatus s;
          if (!answered(
                  &ExecutorStatus::recoveries_handled, [&] { executor.request_recovery(asked); },
                  s)) {
            return Status(StatusCode::DEADLINE_EXCEEDED,
                          "the control loop did not answer the recovery");
          }
          server::to_wire(s.recovery, executor.recovery_limits(), s.state, reply->mutable_status());
          what.detail = reply->status().motion();
          if (s.recovery.outcome == RecoveryOutcome::kRefused) {
            what.detail = server::describe(asked, s.recovery.target);
            return Status(StatusCode::FAILED_PRECONDITION,
                          "recovery refused: " + server::refusal_message(s.recovery, s.state));
          }
          spdlog::warn("recovery from {} by {}: {}", to_string(s.recovery.target), caller.identity,
                       reply->status().motion());
          return Status::OK;
        });
  }

  ServerUnaryReactor* UpdateTask(CallbackServerContext* context,
                                 const v1::UpdateTaskRequest* request,
                                 v1::UpdateTaskReply* reply) override {
    return unary(context, "UpdateTask", Access::kControl, *request,
                 [&](const Caller&, CallRecord& what) {
                   const RunningTask current = running();
                   what.task = current.name;
                   what.revision = current.revision;
                   if (current.id == 0 || executor.status().state != ExecutorState::kRunning) {
                     return Status(StatusCode::FAILED_PRECONDITION, "no task is running");
                   }
                   TaskParameters task = proto::to_task(request->task());
                   task.name = current.name;
                   std::uint64_t id = 0;
                   submit(current.name, current.revision, task, false, &id);
                   reply->set_task_id(id);
                   return Status::OK;
                 });
  }

  ServerUnaryReactor* SetParameter(CallbackServerContext* context,
                                   const v1::SetParameterRequest* request,
                                   v1::UpdateTaskReply* reply) override {
    return unary(
        context, "SetParameter", Access::kControl, *request,
        [&](const Caller& caller, CallRecord& what) {
          const RunningTask current = running();
          what.task = current.name;
          what.revision = current.revision;
          what.detail = request->path().substr(0, 256) + " = " + request->value().substr(0, 256);
          for (const v1::ParameterValue& more : request->more()) {
            what.detail += "; " + more.path().substr(0, 256) + " = " + more.value().substr(0, 256);
          }
          // Its own rate, well above a camera arm's 100 Hz EYE frame: a flood of
          // updates (each validated and audited) is refused before it is parsed.
          const std::string refusal =
              quotas.take_parameter(caller.identity, server::Quotas::Clock::now());
          if (!refusal.empty()) return Status(StatusCode::RESOURCE_EXHAUSTED, refusal);
          if (current.id == 0 || executor.status().state != ExecutorState::kRunning) {
            return Status(StatusCode::FAILED_PRECONDITION, "no task is running");
          }
          // Every field, then one validation and one hand-off: the loop takes them
          // all in one cycle, or nothing is applied.
          v1::TaskParameters message = proto::from_task(current.task);
          proto::set_field(message, request->path(), request->value());
          for (const v1::ParameterValue& more : request->more()) {
            proto::set_field(message, more.path(), more.value());
          }
          TaskParameters task = proto::to_task(message);
          std::uint64_t id = 0;
          submit(current.name, current.revision, task, false, &id);
          reply->set_task_id(id);
          spdlog::info("task '{}': {} (by {})", current.name, what.detail, caller.identity);
          return Status::OK;
        });
  }

  ServerUnaryReactor* AimCamera(CallbackServerContext* context, const v1::AimCameraRequest* request,
                                v1::AimCameraReply* reply) override {
    return unary(
        context, "AimCamera", Access::kControl, *request, [&](const Caller&, CallRecord& what) {
          what.detail = request->camera().substr(0, 64) + ": pan " +
                        fmt::format("{:.1f}", request->pan_deg()) + "°, tilt " +
                        fmt::format("{:.1f}", request->tilt_deg()) + "°";
          if (options.cameras == nullptr) {
            return Status(StatusCode::UNAVAILABLE, "this site has no cameras to aim");
          }
          const auto range = [](const char* field, double v, double most) {
            const double deg = most * kRadToDeg;
            return std::isfinite(v) && std::abs(v) <= deg + 1e-9
                       ? std::string()
                       : fmt::format("{} = {}: within [{:.0f}, {:.0f}]°", field, v, -deg, deg);
          };
          for (const std::string& why :
               {range("pan_deg", request->pan_deg(), camera::kMaxPan),
                range("tilt_deg", request->tilt_deg(), camera::kMaxTilt)}) {
            if (!why.empty()) return Status(StatusCode::INVALID_ARGUMENT, why);
          }
          const std::string why = options.cameras->aim(
              request->camera(), request->pan_deg() * kDegToRad, request->tilt_deg() * kDegToRad);
          if (!why.empty()) return Status(StatusCode::FAILED_PRECONDITION, why);
          reply->set_pan_deg(request->pan_deg());
          reply->set_tilt_deg(request->tilt_deg());
          return Status::OK;
        });
  }

  // A camera view that is the EYE (WatchCameraRequest.eye, eye_source.h), on the cameras'
  // thread: the running task's teleoperation.world_R_eye from the camera's orientation at
  // capture, while its viewer holds the lease. A change of camera is audited.
  void apply_eye(std::uint64_t view, const Caller& viewer, const Matrix3& base_R_camera,
                 std::int64_t capture_ns) {
    if (lease.holder(ControlLease::Clock::now()) != viewer.identity) return;
    const RunningTask current = running();
    if (current.id == 0 || !current.task.teleoperation.enabled ||
        executor.status().state != ExecutorState::kRunning) {
      return;
    }
    const server::EyeSource::Take take = eye.take(view, loop.latest().teleoperation.enabled);
    if (!take.apply) return;
    TaskParameters task = current.task;
    task.teleoperation.world_R_eye = task.world_T_base.R * base_R_camera;
    task.teleoperation.eye_time_ns = static_cast<std::uint64_t>(capture_ns);
    std::uint64_t id = 0;
    submit(current.name, current.revision, task, false, &id);
    if (take.switched) {
      const CallRecord what{current.name, current.revision,
                            "camera mode's EYE frame: camera '" + eye.camera() + "'" +
                                (take.previous.empty() ? "" : " (was '" + take.previous + "')"),
                            false};
      record(viewer, "EyeFrame", what, Status::OK);
      spdlog::info("task '{}': {} (by {})", current.name, what.detail, viewer.identity);
    }
  }

  ServerUnaryReactor* GetAudit(CallbackServerContext* context, const v1::GetAuditRequest* request,
                               v1::GetAuditReply* reply) override {
    return unary(context, "GetAudit", Access::kRole, *request, [&](const Caller&, CallRecord&) {
      constexpr std::uint32_t kMaxLines = 1000;
      const std::uint32_t max =
          request->max() == 0 || request->max() > kMaxLines ? kMaxLines : request->max();
      std::uint64_t next = 0;
      for (std::string& line : audit.read(request->first(), max, next)) {
        reply->add_lines(std::move(line));
      }
      reply->set_next(next);
      return Status::OK;
    });
  }

  // The lease passes to `caller` (an admin) whoever holds it. The previous holder's stream
  // ends (it watches the lease's holder), and a task that runs is stopped: the new holder starts
  // from an arm at rest.
  void take_over(const Caller& caller, CallRecord& what) {
    const std::string previous = lease.take_over(caller.identity, ControlLease::Clock::now());
    audit_lapses();
    remember_holder(caller);
    if (previous.empty() || previous == caller.identity) return;
    const ExecutorState state = executor.status().state;
    if (state == ExecutorState::kRunning) executor.request_stop(BreachCause::kOperatorStop);
    what.detail = "taken over from '" + previous + "'" +
                  (state == ExecutorState::kRunning ? "; the running task was stopped" : "");
    spdlog::warn("control taken over by admin '{}' from '{}'", caller.identity, previous);
  }

  grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>* Teleoperate(
      CallbackServerContext* context) override;

  grpc::ServerWriteReactor<v1::Telemetry>* StreamTelemetry(
      CallbackServerContext* context, const v1::TelemetryRequest* request) override;

  grpc::ServerWriteReactor<v1::BlackBoxData>* FetchBlackBox(
      CallbackServerContext* context, const v1::FetchBlackBoxRequest* request) override;
  grpc::ServerWriteReactor<v1::WatchCameraReply>* WatchCamera(
      CallbackServerContext* context, const v1::WatchCameraRequest* request) override;

  // Into the black box, when the site keeps one.
  void record_sample(const HandControllerSample& sample) {
    if (black_box) black_box->record_increment(sample);
  }

  server::EyeSource eye;  // which camera view sets the EYE frame
  ServerOptions options;
  server::SiteSecurity security;
  server::AuditLog audit;
  server::Quotas quotas;
  Executor& executor;
  ControlLoop& loop;
  HandControllerQueue& queue;
  std::string arm_name;
  server::TaskStore store;
  ControlLease lease;
  server::TelemetryHub hub;
  std::mutex holder_mutex;
  Caller holder_caller;  // the caller last admitted to the lease (holder_mutex)
  // The lease's periodic check (watch_lease).
  std::thread lease_watcher;
  std::mutex watch_mutex;
  std::condition_variable watch_wake;
  bool watch_stopping = false;

  std::mutex mutex;
  RunningTask running_task;
  std::mutex recovery_mutex;

  // One teleoperation stream at a time is the queue's single producer.
  std::atomic<bool> teleop_open{false};
  // Highest global sequence handed to the executor; a new stream numbers from here, so
  // the executor's duplicate check spans streams.
  std::atomic<std::uint64_t> teleop_sequence{0};
  std::atomic<std::uint64_t> teleop_queue_full{0};

  // Audits each stop the loop makes on its own (a breach), once per stop; stops asked for
  // by a call are audited with the call.
  struct BreachWatcher final : CycleSubscriber {
    explicit BreachWatcher(Impl& s) : site(s) {}
    void on_cycle(const CycleTelemetry& cycle) override {
      // Latched from the stop to the reset, recovery included: each breach once, and a new
      // one (a bound a recovery met) as well.
      const bool latched = cycle.state == ExecutorState::kStopping ||
                           cycle.state == ExecutorState::kStopped ||
                           cycle.state == ExecutorState::kRecovering;
      if (!latched) {
        reported = BreachEvent{};
        return;
      }
      if (!cycle.breach || same(reported, cycle.breach)) return;
      reported = cycle.breach;
      if (cycle.breach.cause == BreachCause::kOperatorStop) return;
      const RunningTask task = site.running();
      site.audit.append(AuditRecord{"site", Role::kNone, false, "Breach", task.name, task.revision,
                                    "STOPPED", describe(cycle.breach)});
    }
    void on_shutdown() override {}
    static bool same(const BreachEvent& a, const BreachEvent& b) {
      return a.cause == b.cause && a.index == b.index && a.time == b.time && a.value == b.value;
    }
    Impl& site;
    BreachEvent reported;  // the last one audited; the hub thread only
  };
  BreachWatcher breaches{*this};

  std::unique_ptr<grpc::Server> grpc_server;
  int bound_port = 0;
  // The teleoperation data plane's socket; none when the site runs without it.
  std::unique_ptr<server::DatagramEndpoint> datagrams;
  // The last minutes on disk (black_box.h); none unless options.black_box.directory is set.
  std::unique_ptr<server::BlackBox> black_box;
};

namespace {

// Hand-controller increments in, force reflection out (one per control cycle, the newest
// replacing one not yet sent: the hand controller wants the current force, not a backlog).
class TeleopReactor final
    : public grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>,
      public CycleSubscriber {
 public:
  TeleopReactor(RemoteSiteServer::Impl& site, Caller caller, CallbackServerContext* context)
      : site_(site), caller_(std::move(caller)), operator_(caller_.identity) {
    base_ = site_.teleop_sequence.load();
    // The datagram plane, when the ground asks for it: fresh keys for this stream only, in
    // its initial metadata (mutual TLS, or plaintext on loopback only). The session ends
    // with the stream, whatever ends it (takeover, revocation, shutdown).
    const auto asked = context->client_metadata().find("tether-datagram");
    if (site_.datagrams && asked != context->client_metadata().end()) {
      const datagram::SessionKeys keys = site_.datagrams->open(
          [this](const datagram::IncrementMessage& m, std::int64_t arrival,
                 const std::string& problem) { on_datagram(m, arrival, problem); });
      session_.store(keys.session);
      context->AddInitialMetadata("tether-datagram-session", datagram::to_text(keys));
      context->AddInitialMetadata("tether-datagram-port", std::to_string(site_.datagrams->port()));
    }
    generation_ = site_.security.generation();
    site_.lease.open_stream(operator_);
    const RemoteSiteServer::Impl::RunningTask task = site_.running();
    task_ = task.name;
    revision_ = task.revision;
    site_.audit.append(AuditRecord{caller_.identity, caller_.role, caller_.authenticated,
                                   "Teleoperate", task_, revision_, "OK", "stream opened"});
    // Creation ends here: what the constructor set is seen by every later callback.
    server::callback_ends(this);
    server::callback_ends(&in_);
    server::callback_ends(&out_);
    // Whatever came before this stream is over: its link's statistics do not carry over.
    HandControllerSample opened;
    opened.opened = true;
    if (!site_.queue.push(opened)) site_.teleop_queue_full.fetch_add(1);
    site_.record_sample(opened);
    site_.hub.subscribe(this);
    spdlog::info("teleoperation stream opened by {}", operator_);
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    const server::CallbackScope order(this, &in_);
    if (!ok) {
      // The ground closed its side: the session ended, which is an end and not a stall.
      // The motion already sent still plays out; a stop is the ground's to send.
      HandControllerSample end;
      end.end = true;
      {
        // The end comes on the stream; datagrams still on their way after it carry no motion
        // (the ground ends once its motion was applied) and are not taken: taken after the
        // end, they would start a new stream's stall clock.
        const std::lock_guard push(push_mutex_);
        input_ended_ = true;
        if (!site_.queue.push(end)) site_.teleop_queue_full.fetch_add(1);
        site_.record_sample(end);
      }
      // The stream stays open until a reflection reports the last increment applied, so the
      // ground's count of applied increments is complete, not short by those in flight.
      const RemoteSiteServer::Impl::RunningTask task = site_.running();
      if (highest_.load() == 0 || !task.task.teleoperation.enabled ||
          site_.executor.status().state != ExecutorState::kRunning) {
        finish(Status::OK);
        return;
      }
      std::lock_guard lock(mutex_);
      draining_ = true;
      drain_deadline_ = std::chrono::steady_clock::now() + kDrainLimit;
      return;
    }
    ++received_;
    HandControllerSample sample;
    std::string problem = server::from_wire(in_, base_, sample);
    sample.arrival_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    if (problem.empty() && in_.ByteSizeLong() > server::max_request_bytes("Teleoperate")) {
      problem = std::to_string(in_.ByteSizeLong()) + " bytes: at most " +
                std::to_string(server::max_request_bytes("Teleoperate"));
    }
    if (!problem.empty()) {
      // Nothing of it is applied; the stream is refused and a teleoperated arm stops, on
      // this cause rather than the stall the silence after it would later report.
      const RemoteSiteServer::Impl::RunningTask task = site_.running();
      if (task.task.teleoperation.enabled &&
          site_.executor.status().state == ExecutorState::kRunning) {
        site_.executor.request_stop(BreachCause::kInvalidIncrement);
      }
      spdlog::error("teleoperation stream of {}: increment {} refused: {}", operator_,
                    in_.sequence(), problem);
      finish(Status(StatusCode::INVALID_ARGUMENT,
                    "increment " + std::to_string(in_.sequence()) + ": " + problem));
      return;
    }
    {
      const std::lock_guard push(push_mutex_);
      assembler_.taken_elsewhere(sample.sequence - base_);
      last_ground_ns_ = sample.ground_time_ns;
      push_sample(sample);
    }
    // A stream being finished (shutdown) reads no more. The read chain's order is stated
    // before the next read is started: its callback may run on another thread at once.
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    server::callback_ends(&in_);
    StartRead(&in_);
  }

  void on_cycle(const CycleTelemetry& cycle) override {
    // The stream drives the arm only while its operator holds the lease (a takeover or a
    // release ends it) and keeps the right to (a reload may revoke or demote them).
    const std::string holder = site_.lease.holder(ControlLease::Clock::now());
    if (holder != operator_) {
      close_datagrams();
      finish(Status(StatusCode::ABORTED,
                    holder.empty() ? std::string("control of the arm was released")
                                   : "control of the arm was taken over by '" + holder + "'"));
      return;
    }
    if (const std::uint64_t g = site_.security.generation(); g != generation_) {
      generation_ = g;
      if (const std::string why =
              site_.security.recheck(caller_, "/tether.v1.RemoteSite/Teleoperate");
          !why.empty()) {
        if (site_.executor.status().state == ExecutorState::kRunning) {
          site_.executor.request_stop(BreachCause::kGroundLinkLost);
        }
        site_.lease.release(operator_);
        close_datagrams();
        spdlog::warn("teleoperation stream ended: {}", why);
        const bool revoked =
            caller_.authenticated && !site_.security.revoked(caller_.certificate).empty();
        finish(Status(revoked ? StatusCode::UNAUTHENTICATED : StatusCode::PERMISSION_DENIED, why));
        return;
      }
    }
    // The datagram plane first, outside mutex_: the receiving thread holds the endpoint's
    // lock while it calls on_datagram(), which may finish() the stream under mutex_.
    const bool datagrams = datagram_active(cycle.steady_ns);
    if (datagrams) {
      server::to_datagram(cycle, base_, cycle.cycle % kDetailEvery == 0, reflection_);
      site_.datagrams->send(session_.load(), reflection_);
    }
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    // While reflections go as datagrams the stream carries every kStreamEvery-th cycle:
    // the counters, the breach and the rest the datagrams leave out, and the fallback.
    if (datagrams && !draining_ && cycle.cycle % kStreamEvery != 0 &&
        cycle.state == ExecutorState::kRunning) {
      return;
    }
    if (writing_) {
      server::to_reflection(cycle, base_, &pending_);
      have_pending_ = true;
    } else {
      server::to_reflection(cycle, base_, &out_);
      writing_ = true;
      StartWrite(&out_);
    }
    // Drained: this reflection (sent before the stream finishes) reports the last increment
    // applied, or the task stopped, or the playout took longer than any link could explain.
    if (draining_ && (cycle.teleoperation.last_sequence >= highest_.load() ||
                      cycle.state != ExecutorState::kRunning ||
                      std::chrono::steady_clock::now() >= drain_deadline_)) {
      finishing_ = true;
      flush_ = true;
      final_status_ = Status::OK;
      if (!writing_) {
        finished_ = true;
        Finish(final_status_);
      }
    }
  }

  void on_shutdown() override {
    finish(Status(StatusCode::UNAVAILABLE, "the remote site is shutting down"));
  }

  void OnWriteDone(bool ok) override {
    const server::CallbackScope order(this, &out_);
    std::lock_guard lock(mutex_);
    writing_ = false;
    if (ok && have_pending_ && (!finishing_ || flush_)) {
      out_.Swap(&pending_);
      have_pending_ = false;
      writing_ = true;
      server::callback_ends(&out_);
      StartWrite(&out_);
      return;
    }
    if (finishing_ && !finished_) {
      finished_ = true;
      Finish(final_status_);
    }
  }

  void OnCancel() override {
    server::callback_begins(this);
    const RemoteSiteServer::Impl::RunningTask task = site_.running();
    if (task.task.teleoperation.enabled &&
        site_.executor.status().state == ExecutorState::kRunning) {
      site_.executor.request_stop(BreachCause::kGroundLinkLost);
      spdlog::error("teleoperation stream of {} lost: stopping the arm", operator_);
    }
    finish(Status(StatusCode::CANCELLED, "teleoperation stream cancelled"));
  }

  void OnDone() override {
    server::callback_begins(this);
    server::callback_begins(&in_);
    server::callback_begins(&out_);
    close_datagrams();
    site_.hub.unsubscribe(this);
    site_.lease.close_stream(operator_, ControlLease::Clock::now());
    site_.quotas.close_stream(operator_);
    site_.teleop_open.store(false);
    site_.audit.append(AuditRecord{
        caller_.identity, caller_.role, caller_.authenticated, "Teleoperate", task_, revision_,
        outcome_of(final_status_),
        "stream closed: " + std::to_string(received_) + " increments received on the stream, " +
            std::to_string(datagrams_) + " datagrams, " + std::to_string(queued_) +
            " queued for the arm" + datagram_drops_});
    spdlog::info("teleoperation stream of {} closed", operator_);
    delete this;
  }

 private:
  void finish(const Status& status) {
    closing_.store(true);
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    finishing_ = true;
    final_status_ = status;
    if (!writing_) {
      finished_ = true;
      Finish(status);
    }
  }

  // Into the executor's queue, from either plane (push_mutex_ held): the queue has one
  // producer at a time.
  void push_sample(const HandControllerSample& sample) {
    highest_.store(std::max(highest_.load(), sample.sequence));
    site_.record_sample(sample);
    if (site_.queue.push(sample)) {
      ++queued_;
      std::uint64_t high = site_.teleop_sequence.load();
      while (sample.sequence > high &&
             !site_.teleop_sequence.compare_exchange_weak(high, sample.sequence)) {
      }
    } else {
      site_.teleop_queue_full.fetch_add(1);
    }
  }

  // An authentic increment datagram (the endpoint's receiving thread, its lock held).
  void on_datagram(const datagram::IncrementMessage& m, std::int64_t arrival,
                   const std::string& problem) {
    if (closing_.load()) return;
    const std::lock_guard push(push_mutex_);
    if (input_ended_) return;
    ++datagrams_;
    last_datagram_ns_.store(arrival);
    if (m.end && problem.empty()) {
      // The ground ended the session: an end, not a stall, however late the stream's own
      // end arrives. The motion already here still plays out.
      input_ended_ = true;
      HandControllerSample end;
      end.end = true;
      if (!site_.queue.push(end)) site_.teleop_queue_full.fetch_add(1);
      site_.record_sample(end);
      return;
    }
    std::string why = problem;
    std::size_t count = 0;
    // A datagram's sequence is 32 bits; the global numbering base + sequence stays below
    // kMaxSequence as the stream's does (from_datagram checks it per sample).
    if (why.empty() && base_ > server::kMaxSequence) {
      why = "sequence base " + std::to_string(base_) + " out of range";
    }
    const std::uint64_t previous = assembler_.last_taken();
    if (why.empty()) count = assembler_.take(m, samples_);
    const std::uint64_t own_first = std::uint64_t{m.sequence} - m.pieces + 1;
    std::array<HandControllerSample, 1> one;
    for (std::size_t i = 0; i < count && why.empty(); ++i) {
      const datagram::ConcealedSample& c = samples_[i];
      // A concealed sample's ground time lies between the last taken and this datagram's,
      // in proportion: the playout paces its motion as the hand made it.
      std::uint64_t ground = m.ground_time_ns;
      if (c.concealed && last_ground_ns_ != 0 && last_ground_ns_ < m.ground_time_ns &&
          own_first > previous) {
        const double f =
            static_cast<double>(c.sequence - previous) / static_cast<double>(own_first - previous);
        ground = last_ground_ns_ + static_cast<std::uint64_t>(
                                       f * static_cast<double>(m.ground_time_ns - last_ground_ns_));
      }
      why = server::from_datagram(m, c, base_, ground, arrival, one[0]);
      if (why.empty()) push_sample(one[0]);
    }
    if (count > 0) last_ground_ns_ = m.ground_time_ns;
    if (!why.empty()) {
      // Authentic but out of range: as on the stream, nothing of it is applied, the
      // session is refused and a teleoperated arm stops on this cause.
      closing_.store(true);
      const RemoteSiteServer::Impl::RunningTask task = site_.running();
      if (task.task.teleoperation.enabled &&
          site_.executor.status().state == ExecutorState::kRunning) {
        site_.executor.request_stop(BreachCause::kInvalidIncrement);
      }
      spdlog::error("teleoperation datagram of {}: increment {} refused: {}", operator_, m.sequence,
                    why);
      finish(Status(StatusCode::INVALID_ARGUMENT,
                    "increment " + std::to_string(m.sequence) + ": " + why));
    }
  }

  // Reflections go as datagrams while the ground's datagrams arrive (its address known).
  bool datagram_active(std::int64_t now_ns) const {
    if (session_.load() == 0 || closing_.load()) return false;
    const std::int64_t last = last_datagram_ns_.load();
    return last != 0 && now_ns - last < kDatagramSilence;
  }

  void close_datagrams() {
    closing_.store(true);
    const std::uint32_t session = session_.exchange(0);
    if (session == 0 || !site_.datagrams) return;
    const server::DatagramSessionStats stats = site_.datagrams->stats(session);
    site_.datagrams->close(session);
    if (stats.received + stats.drops.forged + stats.drops.replayed + stats.drops.malformed +
            stats.drops.invalid >
        0) {
      datagram_drops_ = "; datagrams dropped: " + std::to_string(stats.drops.forged) + " forged, " +
                        std::to_string(stats.drops.replayed) + " replayed, " +
                        std::to_string(stats.drops.malformed) + " malformed, " +
                        std::to_string(stats.drops.invalid) + " invalid; " +
                        std::to_string(stats.sent) + " reflections sent";
    }
  }

  static constexpr std::uint64_t kDetailEvery = 5;   // detail group: 200 Hz at 1 kHz
  static constexpr std::uint64_t kStreamEvery = 20;  // the stream's share: 50 Hz at 1 kHz
  // [ns] without an increment datagram after which reflections go back to the stream.
  static constexpr std::int64_t kDatagramSilence = 1'000'000'000;

  RemoteSiteServer::Impl& site_;
  Caller caller_;
  std::string operator_;
  // The datagram session; 0 none or closed (the hub thread reads it while OnDone closes it).
  std::atomic<std::uint32_t> session_{0};
  std::atomic<bool> closing_{false};
  std::atomic<std::int64_t> last_datagram_ns_{0};
  std::mutex push_mutex_;  // the queue's one producer at a time, and what follows
  datagram::IncrementAssembler assembler_;
  std::array<datagram::ConcealedSample, 512> samples_{};
  std::uint64_t last_ground_ns_ = 0;
  bool input_ended_ = false;  // the ground closed its side of the stream
  std::uint64_t datagrams_ = 0;
  std::string datagram_drops_;
  datagram::ReflectionMessage reflection_;  // the hub thread only
  std::string task_;
  std::uint64_t revision_ = 0;
  std::uint64_t generation_ = 0;  // of the security configuration last checked
  std::uint64_t received_ = 0;    // read callbacks run one at a time
  std::uint64_t queued_ = 0;
  std::uint64_t base_ = 0;
  // The newest increment taken (global numbering), from either plane.
  std::atomic<std::uint64_t> highest_{0};
  v1::TeleopIncrement in_;
  std::mutex mutex_;
  v1::ForceReflection out_;
  v1::ForceReflection pending_;
  bool have_pending_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
  // The ground has closed its side; the stream waits for the last increment to be applied.
  // Increments already here are due within the longest playout delay a task may set; the
  // limit adds a second for the jitter around it.
  static constexpr std::chrono::milliseconds kDrainLimit{
      static_cast<std::int64_t>(kMaxPlayoutDelay * 1000.0) + 1000};
  bool draining_ = false;
  std::chrono::steady_clock::time_point drain_deadline_{};
  bool flush_ = false;  // finishing after the reflections already produced are sent
  Status final_status_;
};

class TelemetryReactor final : public grpc::ServerWriteReactor<v1::Telemetry>,
                               public CycleSubscriber {
 public:
  TelemetryReactor(RemoteSiteServer::Impl& site, std::uint32_t decimation, Caller caller)
      : site_(site),
        decimation_(decimation == 0 ? 1 : decimation),
        caller_(std::move(caller)),
        identity_(caller_.identity),
        generation_(site.security.generation()),
        max_queued_(std::max<std::size_t>(2, site.quotas.options().telemetry_queue)) {
    // Creation ends here: what the constructor set is seen by every later callback.
    server::callback_ends(this);
    server::callback_ends(&queue_);
    site_.hub.subscribe(this);
  }

  void on_cycle(const CycleTelemetry& cycle) override {
    if (const std::uint64_t g = site_.security.generation(); g != generation_) {
      generation_ = g;
      if (const std::string why =
              site_.security.recheck(caller_, "/tether.v1.RemoteSite/StreamTelemetry");
          !why.empty()) {
        end(Status(StatusCode::PERMISSION_DENIED, why));
        return;
      }
    }
    if (cycle.cycle % decimation_ != 0) return;
    if (cycle.task_id != task_id_) {
      task_id_ = cycle.task_id;
      task_name_ = site_.task_name(task_id_);
      behaviours_ = site_.behaviours(task_id_);
    }
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    if (queue_.size() >= max_queued_) {
      // A slow reader loses its oldest samples, counted; the front may be in flight, so
      // drop the next oldest.
      queue_.erase(queue_.begin() + (writing_ ? 1 : 0));
      ++dropped_;
    }
    queue_.emplace_back();
    server::to_wire(cycle, task_name_, behaviours_, site_.executor.period(), &queue_.back());
    queue_.back().set_dropped_samples(dropped_);
    if (!writing_) {
      writing_ = true;
      StartWrite(&queue_.front());
    }
  }

  void OnWriteDone(bool ok) override {
    const server::CallbackScope order(this, &queue_);
    std::lock_guard lock(mutex_);
    queue_.pop_front();
    writing_ = false;
    // A failed write means the stream is gone (client vanished, or cancelled while this
    // write was in flight, after OnCancel saw writing_ set). The call must still be
    // finished here: nothing else will, and an unfinished call keeps Server::Shutdown
    // waiting for ever (the SIGTERM hang once a telemetry stream had been opened).
    if (!ok) finishing_ = true;
    if (finishing_) {
      if (!finished_) {
        finished_ = true;
        Finish(ok ? end_status_ : Status(StatusCode::CANCELLED, "telemetry stream ended"));
      }
      return;
    }
    if (!queue_.empty()) {
      writing_ = true;
      server::callback_ends(&queue_);
      StartWrite(&queue_.front());
    }
  }

  void OnCancel() override {
    server::callback_begins(this);
    std::lock_guard lock(mutex_);
    finishing_ = true;
    end_status_ = Status::CANCELLED;
    if (!writing_ && !finished_) {
      finished_ = true;
      Finish(end_status_);
    }
  }

  void on_shutdown() override {
    end(Status(StatusCode::UNAVAILABLE, "the remote site is shutting down"));
  }

  void OnDone() override {
    server::callback_begins(this);
    server::callback_begins(&queue_);
    site_.hub.unsubscribe(this);
    site_.quotas.close_stream(identity_);
    if (dropped_ > 0) {
      spdlog::info("telemetry stream of {} ended; {} samples dropped for a slow reader", identity_,
                   dropped_);
    }
    delete this;
  }

 private:
  RemoteSiteServer::Impl& site_;
  std::uint32_t decimation_;
  std::uint64_t task_id_ = ~0ULL;
  std::string task_name_;
  std::vector<v1::Behaviour> behaviours_;
  // Ends the stream with `status`; a write in flight finishes the call in OnWriteDone (or
  // the server's shutdown deadline cancels a write that a client never reads).
  void end(const Status& status) {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    finishing_ = true;
    end_status_ = status;
    if (!writing_ && !finished_) {
      finished_ = true;
      Finish(end_status_);
    }
  }

  Caller caller_;
  std::string identity_;
  std::uint64_t generation_;  // the hub thread only
  std::size_t max_queued_;
  std::mutex mutex_;
  std::deque<v1::Telemetry> queue_;
  std::uint64_t dropped_ = 0;
  Status end_status_;  // what the stream ends with once finishing (OK: the client is done)
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
};

// A camera view (WatchCamera): the camera's images, VP9-encoded on the cameras' thread, go as
// sealed fragments on the datagram plane to where the ground's feedback comes from; the
// call carries the view's keys first, then the sender's counts once a second (on the hub's
// thread), until the ground ends it or the site shuts down.
class CameraReactor final : public grpc::ServerWriteReactor<v1::WatchCameraReply>,
                            public CycleSubscriber {
 public:
  CameraReactor(RemoteSiteServer::Impl& site, const SceneCamera& camera, int bit_rate_kbps,
                bool eye, Caller caller)
      : site_(site),
        camera_(camera),
        caller_(std::move(caller)),
        identity_(caller_.identity),
        generation_(site.security.generation()) {
    camera::VideoEncoderOptions options;
    options.width = camera.width;
    options.height = camera.height;
    options.frame_rate = camera.frame_rate;
    options.bit_rate = bit_rate_kbps;
    options.key_frame_interval =
        std::max(1, static_cast<int>(std::lround(4.0 * camera.frame_rate)));
    encoder_ = std::make_unique<camera::VideoEncoder>(options);
    // What may throw comes first; images are skipped until the ground's feedback arrives.
    watch_ = site_.options.cameras->watch(
        camera.name, [this](const camera::CameraImage& image) { on_image(image); });
    const datagram::SessionKeys keys =
        site_.datagrams->open_video([this](const datagram::VideoFeedback& f, std::int64_t arrival) {
          on_feedback(f, arrival);
        });
    session_.store(keys.session);
    v1::WatchCameraReply first;
    first.set_datagram_keys(datagram::to_text(keys));
    first.set_datagram_port(site_.datagrams->port());
    fill(first);
    // A view becomes the EYE's source only once nothing else can fail: one that could not be
    // watched must not take the EYE from the view that has it.
    if (eye) eye_.store(site_.eye.open(camera.name));
    // Creation ends here: what the constructor set is seen by every later callback.
    server::callback_ends(this);
    server::callback_ends(&queue_);
    queue(std::move(first));
    site_.hub.subscribe(this);
  }

  void on_cycle(const CycleTelemetry& cycle) override {
    if (const std::uint64_t g = site_.security.generation(); g != generation_) {
      generation_ = g;
      if (const std::string why =
              site_.security.recheck(caller_, "/tether.v1.RemoteSite/WatchCamera");
          !why.empty()) {
        end(Status(StatusCode::PERMISSION_DENIED, why));
        return;
      }
    }
    // About once a second of the control loop's cycles.
    const double now = cycle.arm_time;
    if (now < next_report_) return;
    next_report_ = now + 1.0;
    v1::WatchCameraReply reply;
    fill(reply);
    queue(std::move(reply));
  }

  void on_shutdown() override {
    end(Status(StatusCode::UNAVAILABLE, "the remote site is shutting down"));
  }

  void OnWriteDone(bool ok) override {
    const server::CallbackScope order(this, &queue_);
    std::lock_guard lock(mutex_);
    queue_.pop_front();
    writing_ = false;
    if (!ok) finishing_ = true;
    if (finishing_) {
      if (!finished_) {
        finished_ = true;
        Finish(ok ? end_status_ : Status(StatusCode::CANCELLED, "camera view ended"));
      }
      return;
    }
    if (!queue_.empty()) {
      writing_ = true;
      server::callback_ends(&queue_);
      StartWrite(&queue_.front());
    }
  }

  void OnCancel() override {
    server::callback_begins(this);
    std::lock_guard lock(mutex_);
    finishing_ = true;
    end_status_ = Status::CANCELLED;
    if (!writing_ && !finished_) {
      finished_ = true;
      Finish(end_status_);
    }
  }

  void OnDone() override {
    server::callback_begins(this);
    server::callback_begins(&queue_);
    site_.hub.unsubscribe(this);
    watch_.reset();  // no image reaches on_image after this
    if (const std::uint64_t id = eye_.load(); id != 0) site_.eye.close(id);
    site_.datagrams->close(session_.load());
    site_.quotas.close_camera_view(identity_);
    spdlog::info("camera view of '{}' by {} ended: {} frames, {} key, {:.0f} kB", camera_.name,
                 identity_, frames_.load(), keys_.load(), bytes_.load() / 1e3);
    delete this;
  }

 private:
  void fill(v1::WatchCameraReply& reply) const {
    reply.set_codec(camera::kVp9CodecString);
    proto::from_scene_camera(camera_, reply.mutable_camera());
    reply.set_frames_sent(frames_.load());
    reply.set_bytes_sent(bytes_.load());
    reply.set_key_frames(keys_.load());
    reply.set_frames_skipped(skipped_.load());
    const std::uint64_t n = encoded_.load();
    reply.set_encode_ms_mean(n > 0 ? encode_seconds_.load() * 1e3 / static_cast<double>(n) : 0.0);
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    reply.set_remote_time_ns(static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec);
    reply.set_feedback_ground_ns(feedback_ground_ns_.load());
    reply.set_feedback_arrival_ns(feedback_arrival_ns_.load());
  }

  // The datagram plane's thread.
  void on_feedback(const datagram::VideoFeedback& f, std::int64_t arrival) {
    feedback_ground_ns_.store(f.ground_time_ns);
    feedback_arrival_ns_.store(arrival);
    if (f.key_wanted) key_wanted_.store(true);
    if (!heard_.exchange(true)) {
      // The ground's clock estimate needs a reply that echoes a feedback: the first one
      // goes at once rather than with the next second's counts, so the first frames
      // already carry capture times the ground can place.
      v1::WatchCameraReply reply;
      fill(reply);
      queue(std::move(reply));
    }
  }

  // The cameras' thread: encode, cut and send. Nothing is encoded before the ground's first
  // feedback told where it is (its first frame is then a key frame).
  void on_image(const camera::CameraImage& image) {
    if (const std::uint64_t id = eye_.load(); id != 0 && image.pose_known) {
      site_.apply_eye(id, caller_, image.base_T_camera.R, image.capture_ns);
    }
    if (!heard_.load()) {
      skipped_.fetch_add(1);
      return;
    }
    if (key_wanted_.exchange(false)) encoder_->request_key_frame();
    const auto start = std::chrono::steady_clock::now();
    camera::EncodedFrame frame;
    if (!encoder_->encode(image.rgb, static_cast<double>(image.capture_ns) * 1e-9, frame) ||
        frame.data.empty()) {
      skipped_.fetch_add(1);
      return;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double sum = encode_seconds_.load();
    while (!encode_seconds_.compare_exchange_weak(sum, sum + seconds)) {
    }
    encoded_.fetch_add(1);
    const auto number = static_cast<std::uint32_t>(frames_.load());
    datagram::CameraPose pose;
    if (image.pose_known) {
      pose.known = true;
      const Eigen::Quaterniond q(image.base_T_camera.R);
      pose.p = {static_cast<float>(image.base_T_camera.p.x()),
                static_cast<float>(image.base_T_camera.p.y()),
                static_cast<float>(image.base_T_camera.p.z())};
      pose.q = {static_cast<float>(q.w()), static_cast<float>(q.x()), static_cast<float>(q.y()),
                static_cast<float>(q.z())};
    }
    for (const std::vector<std::uint8_t>& payload :
         datagram::fragment_frame(frame.data, number, frame.key, image.capture_ns, pose)) {
      if (site_.datagrams->send_video(session_.load(), payload)) bytes_.fetch_add(payload.size());
    }
    frames_.fetch_add(1);
    if (frame.key) keys_.fetch_add(1);
  }

  void queue(v1::WatchCameraReply&& reply) {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    if (queue_.size() >= 4) queue_.erase(queue_.begin() + (writing_ ? 1 : 0));  // a slow reader
    queue_.push_back(std::move(reply));
    if (!writing_) {
      writing_ = true;
      StartWrite(&queue_.front());
    }
  }

  void end(const Status& status) {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    finishing_ = true;
    end_status_ = status;
    if (!writing_ && !finished_) {
      finished_ = true;
      Finish(end_status_);
    }
  }

  RemoteSiteServer::Impl& site_;
  // This view's id as an EYE source (eye_source.h); 0: not one (yet). Set at the end of
  // creation, while the camera's thread may already deliver images.
  std::atomic<std::uint64_t> eye_{0};
  SceneCamera camera_;
  Caller caller_;
  std::string identity_;
  std::uint64_t generation_;                       // the hub thread only
  double next_report_ = 0.0;                       // the hub thread only
  std::unique_ptr<camera::VideoEncoder> encoder_;  // the cameras' thread only
  std::atomic<std::uint32_t> session_{0};
  std::unique_ptr<camera::CameraWatch> watch_;
  std::atomic<bool> heard_{false};
  std::atomic<bool> key_wanted_{false};
  std::atomic<std::int64_t> feedback_ground_ns_{0};
  std::atomic<std::int64_t> feedback_arrival_ns_{0};
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> keys_{0};
  std::atomic<std::uint64_t> skipped_{0};
  std::atomic<std::uint64_t> encoded_{0};
  std::atomic<double> encode_seconds_{0.0};
  std::mutex mutex_;
  std::deque<v1::WatchCameraReply> queue_;
  Status end_status_;
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
};

// A stream refused before it started.
template <typename Reactor>
class RefusedStream final : public Reactor {
 public:
  explicit RefusedStream(const Status& status) {
    // Finish here only fills gRPC's pre-bind backlog; the stream is bound, and its
    // callbacks can run, once the constructor has returned.
    this->Finish(status);
    server::callback_ends(this);
  }
  void OnDone() override {
    server::callback_begins(this);
    delete this;
  }
};

// The black box's segments, whole files one after another: a segment's first message names
// it, its bytes follow in pieces of up to kPiece, the last piece marked. Files are opened
// when their turn comes and read as the client takes them; a segment the ring deletes
// meanwhile stays readable through the open descriptor.
class BlackBoxReactor final : public grpc::ServerWriteReactor<v1::BlackBoxData> {
 public:
  static constexpr std::size_t kPiece = 1 << 20;

  BlackBoxReactor(std::vector<server::SegmentInfo> segments, bool list_only)
      : segments_(std::move(segments)), list_only_(list_only) {
    server::callback_ends(this);
    server::callback_ends(&out_);
    next();
  }
  void OnWriteDone(bool ok) override {
    const server::CallbackScope order(this, &out_);
    if (!ok) {
      Finish(Status(StatusCode::CANCELLED, "the client went away"));
      return;
    }
    next();
  }
  void OnDone() override {
    server::callback_begins(this);
    delete this;
  }

 private:
  void next() {
    out_.Clear();
    if (!file_.is_open()) {
      if (index_ == segments_.size()) {
        Finish(Status::OK);
        return;
      }
      const server::SegmentInfo& s = segments_[index_];
      v1::BlackBoxSegment* segment = out_.mutable_segment();
      segment->set_name(s.path.filename().string());
      segment->set_start_unix_ns(s.start_unix_ns);
      segment->set_end_unix_ns(s.end_unix_ns);
      segment->set_bytes(s.bytes);
      segment->set_complete(s.complete);
      for (const std::string& id : s.breaches) segment->add_breaches(id);
      ++index_;
      if (list_only_) {
        out_.set_last(true);
        write();
        return;
      }
      file_.open(s.path, std::ios::binary);
      if (!file_) {
        Finish(Status(StatusCode::INTERNAL, "black box: cannot read " + s.path.string()));
        return;
      }
    }
    buffer_.resize(kPiece);
    file_.read(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.resize(static_cast<std::size_t>(file_.gcount()));
    out_.set_data(buffer_);
    if (file_.eof() || buffer_.empty()) {
      out_.set_last(true);
      file_.close();
    }
    write();
  }
  void write() {
    server::callback_ends(&out_);
    StartWrite(&out_);
  }

  std::vector<server::SegmentInfo> segments_;
  bool list_only_ = false;
  std::size_t index_ = 0;
  std::ifstream file_;
  std::string buffer_;
  v1::BlackBoxData out_;
};

}  // namespace

grpc::ServerWriteReactor<v1::BlackBoxData>* RemoteSiteServer::Impl::FetchBlackBox(
    CallbackServerContext* context, const v1::FetchBlackBoxRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::BlackBoxData>>;
  const Caller caller = security.caller(*context);
  Status status = admit(caller, "FetchBlackBox", Access::kRole);
  std::vector<server::SegmentInfo> segments;
  CallRecord what;
  if (status.ok() && !black_box) {
    status = Status(StatusCode::FAILED_PRECONDITION,
                    "this site keeps no black box (tether-remote --black-box DIR)");
  }
  if (status.ok()) {
    const auto finite_non_negative = [](double v) { return std::isfinite(v) && v >= 0.0; };
    if (!finite_non_negative(request->before_s()) || !finite_non_negative(request->after_s()) ||
        request->before_s() > 86400.0 || request->after_s() > 86400.0) {
      status = Status(StatusCode::INVALID_ARGUMENT,
                      "before_s " + std::to_string(request->before_s()) + ", after_s " +
                          std::to_string(request->after_s()) + ": each in [0, 86400] s");
    }
  }
  if (status.ok()) {
    server::SegmentQuery query;
    query.all = request->all();
    if (request->has_unix_ns()) query.around_unix_ns = request->unix_ns();
    query.breach_id = request->breach_id().substr(0, 128);
    if (request->before_s() > 0.0) query.before = request->before_s();
    if (request->after_s() > 0.0) query.after = request->after_s();
    what.detail = query.all ? "all" : !query.breach_id.empty() ? query.breach_id : "around a time";
    try {
      segments = request->list_only() ? black_box->segments() : black_box->fetch(query);
    } catch (const std::invalid_argument& e) {
      status = Status(StatusCode::NOT_FOUND, e.what());
    }
  }
  if (!request->list_only()) {
    if (status.ok()) what.detail += ": " + std::to_string(segments.size()) + " segments";
    record(caller, "FetchBlackBox", what, status);
  }
  if (!status.ok()) return new Refused(status);
  return new BlackBoxReactor(std::move(segments), request->list_only());
}

grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>*
RemoteSiteServer::Impl::Teleoperate(CallbackServerContext* context) {
  using Refused = RefusedStream<grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>>;
  const Caller caller = security.caller(*context);
  const auto refuse = [&](const Status& status) {
    const RunningTask task = running();
    record(caller, "Teleoperate", CallRecord{task.name, task.revision, "stream refused"}, status);
    return new Refused(status);
  };
  Status status = admit(caller, "Teleoperate", Access::kControl);
  if (!status.ok()) return refuse(status);
  if (std::string why = quotas.open_stream(caller.identity); !why.empty()) {
    return refuse(Status(StatusCode::RESOURCE_EXHAUSTED, why));
  }
  if (teleop_open.exchange(true)) {
    quotas.close_stream(caller.identity);
    return refuse(Status(StatusCode::FAILED_PRECONDITION,
                         "a teleoperation stream is already open on this arm"));
  }
  return new TeleopReactor(*this, caller, context);
}

grpc::ServerWriteReactor<v1::WatchCameraReply>* RemoteSiteServer::Impl::WatchCamera(
    CallbackServerContext* context, const v1::WatchCameraRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::WatchCameraReply>>;
  const Caller caller = security.caller(*context);
  if (Status status = admit(caller, "WatchCamera", Access::kRole); !status.ok()) {
    return new Refused(status);
  }
  if (request->eye()) {
    // Setting the EYE frame changes how the hand moves the arm: the lease holder's.
    if (caller.role < Role::kOperator) {
      return new Refused(Status(StatusCode::PERMISSION_DENIED,
                                "'" + caller.identity + "' (role " + to_string(caller.role) +
                                    ") may not set the EYE frame (eye): it needs the role " +
                                    to_string(Role::kOperator)));
    }
    if (Status status = admit(caller, "WatchCamera", Access::kControl); !status.ok()) {
      return new Refused(status);
    }
  }
  if (options.cameras == nullptr || !datagrams) {
    return new Refused(Status(StatusCode::UNAVAILABLE,
                              options.cameras == nullptr
                                  ? "this site has no cameras to watch"
                                  : "this site's datagram plane is off (--datagram-port off): "
                                    "camera video travels only on it"));
  }
  const std::vector<SceneCamera>& cameras = options.cameras->cameras();
  const auto it = std::find_if(cameras.begin(), cameras.end(),
                               [&](const SceneCamera& c) { return c.name == request->camera(); });
  if (it == cameras.end()) {
    std::string names;
    for (const SceneCamera& c : cameras) names += (names.empty() ? "" : ", ") + c.name;
    return new Refused(
        Status(StatusCode::NOT_FOUND,
               "camera = '" + request->camera() + "': no such camera (there are: " + names + ")"));
  }
  const int rate = request->bit_rate_kbps();
  if (rate != 0 && (rate < 100 || rate > 8000)) {
    return new Refused(Status(
        StatusCode::INVALID_ARGUMENT,
        "bit_rate_kbps = " + std::to_string(rate) + ": must be 0 (1000) or in [100, 8000] kbit/s"));
  }
  if (std::string why = quotas.open_camera_view(caller.identity); !why.empty()) {
    return new Refused(Status(StatusCode::RESOURCE_EXHAUSTED, why));
  }
  try {
    return new CameraReactor(*this, *it, rate == 0 ? 1000 : rate, request->eye(), caller);
  } catch (const std::exception& e) {
    quotas.close_camera_view(caller.identity);
    return new Refused(Status(StatusCode::UNAVAILABLE,
                              "camera '" + request->camera() + "' cannot be watched: " + e.what()));
  }
}

grpc::ServerWriteReactor<v1::Telemetry>* RemoteSiteServer::Impl::StreamTelemetry(
    CallbackServerContext* context, const v1::TelemetryRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::Telemetry>>;
  const Caller caller = security.caller(*context);
  if (Status status = admit(caller, "StreamTelemetry", Access::kRole); !status.ok()) {
    return new Refused(status);
  }
  if (std::string why = quotas.open_stream(caller.identity); !why.empty()) {
    return new Refused(Status(StatusCode::RESOURCE_EXHAUSTED, why));
  }
  return new TelemetryReactor(*this, request->decimation(), caller);
}

RemoteSiteServer::RemoteSiteServer(const ServerOptions& options, Executor& executor,
                                   ControlLoop& loop, HandControllerQueue& queue,
                                   const std::string& arm_name)
    : impl_(std::make_unique<Impl>(options, executor, loop, queue, arm_name)) {
  // Every method of the service has a role: one added to the proto without one would be
  // admin-only, which is safe but surely not meant.
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(kServiceName);
  for (int i = 0; service != nullptr && i < service->method_count(); ++i) {
    const std::string method = kMethodPrefix + service->method(i)->name();
    if (!server::has_role(method)) {
      throw std::logic_error("no role is given to " + method + " (site_security.cc)");
    }
  }
  static std::once_flag route_grpc_log;
  std::call_once(route_grpc_log, [] { gpr_set_log_function(log_from_grpc); });
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, impl_->security.credentials(), &impl_->bound_port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(server::kMaxReceiveMessage));
  builder.RegisterService(impl_.get());
  impl_->grpc_server = builder.BuildAndStart();
  if (!impl_->grpc_server || impl_->bound_port == 0) {
    throw std::runtime_error("cannot serve on '" + options.address +
                             "' (address in use or malformed)");
  }
  if (options.datagram_port >= 0) {
    // The gRPC address's host; UDP on the same port number keeps one number to open in a
    // firewall.
    const std::string& a = options.address;
    std::string host = a.substr(0, a.rfind(':'));
    if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    const int wanted = options.datagram_port == 0 ? impl_->bound_port : options.datagram_port;
    try {
      impl_->datagrams = std::make_unique<server::DatagramEndpoint>(host, wanted);
    } catch (const std::runtime_error& e) {
      if (options.datagram_port != 0) throw;
      spdlog::warn("{}; the datagram plane takes any free port", e.what());
      impl_->datagrams = std::make_unique<server::DatagramEndpoint>(host, 0);
    }
  }
  impl_->grpc_server->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  if (!options.black_box.directory.empty()) {
    std::map<std::string, std::string> site{
        {"site", options.site_name}, {"arm", arm_name}, {"arm_link", options.arm_link}};
    if (options.scene) site["scene"] = options.scene->name;
    // Cycle numbers start again with each run of the site: readers tell runs apart by this.
    site["run"] = std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
    impl_->black_box = std::make_unique<server::BlackBox>(loop, options.black_box, site);
    impl_->audit.set_listener(
        [box = impl_->black_box.get()](const std::string& line) { box->record_audit(line); });
  }
  impl_->hub.subscribe(&impl_->breaches);
  impl_->hub.start();
  impl_->lease_watcher = std::thread([impl = impl_.get()] { impl->watch_lease(); });
  spdlog::info(
      "remote site '{}' serving {} on port {} ({}), datagrams (teleoperation, cameras) on {}",
      options.site_name, kServiceName, impl_->bound_port,
      options.security.insecure ? "plaintext, --insecure" : "mutual TLS",
      impl_->datagrams ? "UDP port " + std::to_string(impl_->datagrams->port())
                       : std::string("no port (off)"));
}

RemoteSiteServer::~RemoteSiteServer() { shutdown(); }

int RemoteSiteServer::port() const { return impl_->bound_port; }
int RemoteSiteServer::datagram_port() const {
  return impl_->datagrams ? impl_->datagrams->port() : -1;
}

std::string RemoteSiteServer::reload_security() {
  std::string summary = impl_->security.reload();
  spdlog::info("security reloaded: {}", summary);
  impl_->audit.append(AuditRecord{"site", Role::kNone, false, "Reload", "", 0, "OK", summary});
  return summary;
}

void RemoteSiteServer::shutdown() {
  impl_->stop_lease_watch();
  if (!impl_->grpc_server) return;
  impl_->grpc_server->GetHealthCheckService()->SetServingStatus(kServiceName, false);
  // tether's own streams end at once; a write a client never reads is cancelled when the
  // deadline passes, and the hub must keep serving the streams until then.
  impl_->hub.end_streams();
  impl_->grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  impl_->hub.stop();
  impl_->grpc_server.reset();
  if (impl_->black_box) {
    impl_->audit.set_listener(nullptr);
    impl_->black_box->stop();
  }
}

}  // namespace tether::remote
