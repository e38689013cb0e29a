#include "tether/remote/server/remote_site_server.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "callback_order.h"
#include "control_lease.h"
#include "task_store.h"
#include "telemetry_hub.h"
#include "tether/common/task/field_path.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"
#include "tether/v1/remote_site.grpc.pb.h"
#include "wire.h"

namespace tether::remote {

namespace {

using grpc::CallbackServerContext;
using grpc::ServerUnaryReactor;
using grpc::Status;
using grpc::StatusCode;
using server::ControlLease;
using server::CycleSubscriber;

constexpr const char* kServiceName = "tether.v1.RemoteSite";
// Telemetry waiting for a slow reader; beyond this the oldest samples are dropped.
constexpr std::size_t kMaxQueuedTelemetry = 20000;

std::string operator_of(const CallbackServerContext* context) {
  const auto& metadata = context->client_metadata();
  auto it = metadata.find("tether-operator");
  if (it == metadata.end()) return {};
  return std::string(it->second.data(), it->second.size());
}

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

// Protobuf's text parser reports through a collector; this keeps the first message.
class ParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int /*line*/, int column, const std::string& message) override {
    if (text.empty()) text = "column " + std::to_string(column + 1) + ": " + message;
  }
  std::string text;
};

// Sets the field of `task` spelt `spelled` (FieldPath, e.g. "impedance.mass.rotation.x")
// from protobuf text format: a number, an enum name, or a message's fields ("x: 1 y: 2").
// A list (repeated field) is set through the message that holds it. Errors start with the
// path as given, in the spelling of every other message about a task parameter.
// Fields of the task that identify it rather than parameterise it: never set this way.
constexpr std::array<const char*, 1> kIdentityFields = {"name"};
// Longest path and value SetParameter accepts [characters]: the longest path in the schema
// is under 80, and a whole section in text format (a trajectory's 64 waypoints) under 8 KiB.
constexpr std::size_t kMaxParameterPath = 256;
constexpr std::size_t kMaxParameterValue = 16384;

void set_field(v1::TaskParameters& task, const std::string& spelled, const std::string& value) {
  if (spelled.size() > kMaxParameterPath) {
    throw proto::ConversionError("path = '" + spelled.substr(0, 32) + "...' (" +
                                 std::to_string(spelled.size()) + " characters): at most " +
                                 std::to_string(kMaxParameterPath));
  }
  const std::optional<FieldPath> path = FieldPath::parse(spelled);
  if (!path) {
    throw proto::ConversionError("path = '" + spelled +
                                 "': not a field path; spell it as in the task file, e.g. "
                                 "impedance.mass.rotation.x");
  }
  const std::vector<FieldPath::Segment>& segments = path->segments();
  for (const char* identity : kIdentityFields) {
    if (!segments.empty() && segments.front().name == identity) {
      throw proto::ConversionError(*path, std::string(": identifies the task and is not a "
                                                      "parameter; upload the set under another "
                                                      "name instead"));
    }
  }
  if (value.size() > kMaxParameterValue) {
    throw proto::ConversionError(spelled + " = '" + value.substr(0, 32) + "...' (" +
                                 std::to_string(value.size()) + " characters): at most " +
                                 std::to_string(kMaxParameterValue));
  }
  google::protobuf::Message* message = &task;
  FieldPath walked;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const std::string& name = segments[s].name;
    const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr) {
      std::string names;
      for (int i = 0; i < descriptor->field_count(); ++i) {
        names += (i ? ", " : "") + descriptor->field(i)->name();
      }
      throw proto::ConversionError(
          *path, std::string(": ")
                     .append(walked.empty() ? std::string("the task") : walked.to_string())
                     .append(" has no field '")
                     .append(name)
                     .append("'; fields: ")
                     .append(names));
    }
    const FieldPath holder = walked;
    walked = walked.field(name);
    if (field->is_repeated()) {
      throw proto::ConversionError(*path, ": " + walked.to_string() +
                                              " is a list; set the message that holds it, " +
                                              holder.to_string());
    }
    if (segments[s].index >= 0) {
      throw proto::ConversionError(*path, ": " + walked.to_string() + " is not a list");
    }
    if (s + 1 == segments.size()) {
      ParseErrors errors;
      google::protobuf::TextFormat::Parser parser;
      parser.RecordErrorsTo(&errors);
      bool ok = false;
      if (field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
        google::protobuf::Message* child = message->GetReflection()->MutableMessage(message, field);
        child->Clear();
        ok = parser.ParseFromString(value, child);
      } else {
        ok = parser.ParseFieldValueFromString(value, field, message);
      }
      if (!ok) {
        throw proto::ConversionError(*path, " = '" + value + "': not a valid " +
                                                field->type_name() + " (" + errors.text + ")");
      }
      return;
    }
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
      throw proto::ConversionError(
          *path, ": " + walked.to_string() + " is a " + field->type_name() + ", not a message");
    }
    message = message->GetReflection()->MutableMessage(message, field);
  }
}

}  // namespace

struct RemoteSiteServer::Impl final : v1::RemoteSite::CallbackService {
  struct RunningTask {
    std::uint64_t id = 0;
    std::string name;
    TaskParameters task;
    std::vector<v1::Behaviour> behaviours;
  };

  Impl(const ServerOptions& o, Executor& e, ControlLoop& l, HandControllerQueue& q,
       const std::string& arm)
      : options(o),
        executor(e),
        loop(l),
        queue(q),
        arm_name(arm),
        store(e.model(), o.task_directory),
        lease(std::chrono::duration_cast<ControlLease::Clock::duration>(
            std::chrono::duration<double>(o.lease_timeout))),
        hub(l) {}

  // ---- helpers ----
  Status control(CallbackServerContext* context) {
    const std::string name = operator_of(context);
    if (name.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "metadata 'tether-operator' is missing: controlling calls name their "
                    "operator");
    }
    if (auto refusal = lease.claim(name, ControlLease::Clock::now())) {
      return Status(StatusCode::FAILED_PRECONDITION, *refusal);
    }
    return Status::OK;
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

  void submit(const std::string& name, const TaskParameters& task, bool restart,
              std::uint64_t* id_out) {
    std::lock_guard lock(mutex);
    const std::uint64_t id = executor.submit(task, restart);
    running_task = RunningTask{id, name, task, server::enabled_behaviours(task)};
    *id_out = id;
  }

  static void summary(const server::StoredTask& stored, v1::TaskSummary* out) {
    out->set_name(stored.name);
    out->set_revision(stored.revision);
    out->set_period_s(stored.task.period);
    for (v1::Behaviour b : server::enabled_behaviours(stored.task)) out->add_behaviours(b);
  }

  template <typename Body>
  ServerUnaryReactor* unary(CallbackServerContext* context, bool needs_control, Body&& body) {
    ServerUnaryReactor* reactor = context->DefaultReactor();
    Status status = needs_control ? control(context) : Status::OK;
    if (status.ok()) status = guarded(body);
    reactor->Finish(status);
    return reactor;
  }

  // ---- service ----
  ServerUnaryReactor* GetStatus(CallbackServerContext* context, const v1::GetStatusRequest*,
                                v1::SiteStatus* reply) override {
    return unary(context, false, [&] {
      const ExecutorStatus s = executor.status();
      const CycleTelemetry latest = hub.latest();
      reply->set_site(options.site_name);
      reply->set_arm(arm_name);
      reply->set_arm_link(options.arm_link);
      reply->set_state(proto::from_executor_state(s.state));
      reply->set_task_id(s.task_id);
      reply->set_task_name(task_name(s.task_id));
      server::to_wire(s.breach, reply->mutable_breach());
      reply->set_controller(lease.holder(ControlLease::Clock::now()));
      server::to_wire(s.teleoperation, 0, reply->mutable_teleoperation());
      v1::LoopTiming* timing = reply->mutable_timing();
      timing->set_period_s(executor.period());
      timing->set_cycles(latest.cycle);
      timing->set_overruns(latest.overruns);
      timing->set_compute_s(latest.compute_time);
      timing->set_wakeup_latency_s(latest.wakeup_latency);
      proto::from_joint_vector(latest.measured_joints, reply->mutable_measured_joints());
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
                                     const v1::AcquireControlRequest*,
                                     v1::AcquireControlReply* reply) override {
    return unary(context, true, [&] {
      reply->set_controller(operator_of(context));
      return Status::OK;
    });
  }

  ServerUnaryReactor* ReleaseControl(CallbackServerContext* context,
                                     const v1::ReleaseControlRequest*,
                                     v1::ReleaseControlReply*) override {
    return unary(context, false, [&] {
      lease.release(operator_of(context));
      return Status::OK;
    });
  }

  ServerUnaryReactor* UploadTask(CallbackServerContext* context,
                                 const v1::UploadTaskRequest* request,
                                 v1::UploadTaskReply* reply) override {
    return unary(context, true, [&] {
      TaskParameters task = proto::to_task(request->task());
      const std::uint64_t revision = store.put(request->name(), task, request->replace());
      reply->set_name(request->name());
      reply->set_revision(revision);
      spdlog::info("task '{}' revision {} uploaded by {}", request->name(), revision,
                   operator_of(context));
      return Status::OK;
    });
  }

  ServerUnaryReactor* ListTasks(CallbackServerContext* context, const v1::ListTasksRequest*,
                                v1::ListTasksReply* reply) override {
    return unary(context, false, [&] {
      for (const auto& stored : store.list()) summary(stored, reply->add_tasks());
      return Status::OK;
    });
  }

  ServerUnaryReactor* GetTask(CallbackServerContext* context, const v1::GetTaskRequest* request,
                              v1::GetTaskReply* reply) override {
    return unary(context, false, [&] {
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
    return unary(context, true, [&] {
      store.remove(request->name());
      return Status::OK;
    });
  }

  ServerUnaryReactor* StartTask(CallbackServerContext* context, const v1::StartTaskRequest* request,
                                v1::StartTaskReply* reply) override {
    return unary(context, true, [&] {
      auto stored = store.get(request->name());
      if (!stored) return Status(StatusCode::NOT_FOUND, "no task named '" + request->name() + "'");
      std::uint64_t id = 0;
      submit(stored->name, stored->task, true, &id);
      reply->set_task_id(id);
      spdlog::info("task '{}' started as #{} by {}", stored->name, id, operator_of(context));
      return Status::OK;
    });
  }

  // Anyone may stop the arm: stopping is never a privilege.
  ServerUnaryReactor* Stop(CallbackServerContext* context, const v1::StopRequest*,
                           v1::StopReply* reply) override {
    return unary(context, false, [&] {
      executor.request_stop(BreachCause::kOperatorStop);
      const std::string who = operator_of(context);
      spdlog::warn("stop requested by {}", who.empty() ? context->peer() : who);
      // Reply once the loop has taken the stop (its next cycle), so that what the caller
      // does next — a start, a reset — already sees the stopping arm.
      const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      ExecutorState state = executor.status().state;
      while ((state == ExecutorState::kRunning || state == ExecutorState::kIdle) &&
             std::chrono::steady_clock::now() < limit) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        state = executor.status().state;
      }
      reply->set_state(proto::from_executor_state(state));
      return Status::OK;
    });
  }

  ServerUnaryReactor* Reset(CallbackServerContext* context, const v1::ResetRequest*,
                            v1::ResetReply* reply) override {
    return unary(context, true, [&] {
      // A reset during the stop ramp would be refused; wait for the ramp to end.
      const auto wait_limit = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (executor.status().state == ExecutorState::kStopping &&
             std::chrono::steady_clock::now() < wait_limit) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      const std::uint64_t before = executor.status().resets_handled;
      executor.request_reset();
      ExecutorStatus s = executor.status();
      const auto answer_limit = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (s.resets_handled == before && std::chrono::steady_clock::now() < answer_limit) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        s = executor.status();
      }
      if (s.resets_handled == before) {
        return Status(StatusCode::DEADLINE_EXCEEDED, "the control loop did not answer the reset");
      }
      reply->set_accepted(s.last_reset == ResetOutcome::kAccepted);
      if (s.last_reset == ResetOutcome::kRefusedNotStopped) {
        reply->set_message("nothing to reset: the executor is " + std::string(to_string(s.state)));
      } else if (s.last_reset == ResetOutcome::kRefusedBreach) {
        reply->set_message(describe(s.reset_refusal) + " persists; move out of it first");
      }
      return Status::OK;
    });
  }

  ServerUnaryReactor* UpdateTask(CallbackServerContext* context,
                                 const v1::UpdateTaskRequest* request,
                                 v1::UpdateTaskReply* reply) override {
    return unary(context, true, [&] {
      const RunningTask current = running();
      if (current.id == 0 || executor.status().state != ExecutorState::kRunning) {
        return Status(StatusCode::FAILED_PRECONDITION, "no task is running");
      }
      TaskParameters task = proto::to_task(request->task());
      task.name = current.name;
      std::uint64_t id = 0;
      submit(current.name, task, false, &id);
      reply->set_task_id(id);
      return Status::OK;
    });
  }

  ServerUnaryReactor* SetParameter(CallbackServerContext* context,
                                   const v1::SetParameterRequest* request,
                                   v1::UpdateTaskReply* reply) override {
    return unary(context, true, [&] {
      const RunningTask current = running();
      if (current.id == 0 || executor.status().state != ExecutorState::kRunning) {
        return Status(StatusCode::FAILED_PRECONDITION, "no task is running");
      }
      v1::TaskParameters message = proto::from_task(current.task);
      set_field(message, request->path(), request->value());
      TaskParameters task = proto::to_task(message);
      std::uint64_t id = 0;
      submit(current.name, task, false, &id);
      reply->set_task_id(id);
      spdlog::info("task '{}': {} = {} (by {})", current.name, request->path(), request->value(),
                   operator_of(context));
      return Status::OK;
    });
  }

  grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>* Teleoperate(
      CallbackServerContext* context) override;

  grpc::ServerWriteReactor<v1::Telemetry>* StreamTelemetry(
      CallbackServerContext* context, const v1::TelemetryRequest* request) override;

  ServerOptions options;
  Executor& executor;
  ControlLoop& loop;
  HandControllerQueue& queue;
  std::string arm_name;
  server::TaskStore store;
  ControlLease lease;
  server::TelemetryHub hub;

  std::mutex mutex;
  RunningTask running_task;

  // One teleoperation stream at a time is the queue's single producer.
  std::atomic<bool> teleop_open{false};
  // Highest global sequence handed to the executor; a new stream numbers from here, so
  // the executor's duplicate check spans streams.
  std::atomic<std::uint64_t> teleop_sequence{0};
  std::atomic<std::uint64_t> teleop_queue_full{0};

  std::unique_ptr<grpc::Server> grpc_server;
  int bound_port = 0;
};

namespace {

// Hand-controller increments in, force reflection out (one per control cycle, the newest
// replacing one not yet sent: the hand controller wants the current force, not a backlog).
class TeleopReactor final
    : public grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>,
      public CycleSubscriber {
 public:
  TeleopReactor(RemoteSiteServer::Impl& site, std::string operator_name)
      : site_(site), operator_(std::move(operator_name)) {
    base_ = site_.teleop_sequence.load();
    site_.lease.open_stream(operator_);
    // Creation ends here: what the constructor set is seen by every later callback.
    server::callback_ends(this);
    server::callback_ends(&in_);
    server::callback_ends(&out_);
    site_.hub.subscribe(this);
    spdlog::info("teleoperation stream opened by {}", operator_);
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    const server::CallbackScope order(this, &in_);
    if (!ok) {
      finish(Status::OK);
      return;
    }
    HandControllerSample sample;
    const std::string problem = server::from_wire(in_, base_, sample);
    if (!problem.empty()) {
      finish(Status(StatusCode::INVALID_ARGUMENT,
                    "increment " + std::to_string(in_.sequence()) + ": " + problem));
      return;
    }
    if (site_.queue.push(sample)) {
      std::uint64_t high = site_.teleop_sequence.load();
      while (sample.sequence > high &&
             !site_.teleop_sequence.compare_exchange_weak(high, sample.sequence)) {
      }
    } else {
      site_.teleop_queue_full.fetch_add(1);
    }
    // A stream being finished (shutdown) reads no more.
    std::lock_guard lock(mutex_);
    if (!finishing_) StartRead(&in_);
  }

  void on_cycle(const CycleTelemetry& cycle) override {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    if (writing_) {
      server::to_reflection(cycle, base_, &pending_);
      have_pending_ = true;
      return;
    }
    server::to_reflection(cycle, base_, &out_);
    writing_ = true;
    StartWrite(&out_);
  }

  void on_shutdown() override {
    finish(Status(StatusCode::UNAVAILABLE, "the remote site is shutting down"));
  }

  void OnWriteDone(bool ok) override {
    const server::CallbackScope order(this, &out_);
    std::lock_guard lock(mutex_);
    writing_ = false;
    if (ok && have_pending_ && !finishing_) {
      out_.Swap(&pending_);
      have_pending_ = false;
      writing_ = true;
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
    site_.hub.unsubscribe(this);
    site_.lease.close_stream(operator_, ControlLease::Clock::now());
    site_.teleop_open.store(false);
    spdlog::info("teleoperation stream of {} closed", operator_);
    delete this;
  }

 private:
  void finish(const Status& status) {
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    finishing_ = true;
    final_status_ = status;
    if (!writing_) {
      finished_ = true;
      Finish(status);
    }
  }

  RemoteSiteServer::Impl& site_;
  std::string operator_;
  std::uint64_t base_ = 0;
  v1::TeleopIncrement in_;
  std::mutex mutex_;
  v1::ForceReflection out_;
  v1::ForceReflection pending_;
  bool have_pending_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool finished_ = false;
  Status final_status_;
};

class TelemetryReactor final : public grpc::ServerWriteReactor<v1::Telemetry>,
                               public CycleSubscriber {
 public:
  TelemetryReactor(RemoteSiteServer::Impl& site, std::uint32_t decimation)
      : site_(site), decimation_(decimation == 0 ? 1 : decimation) {
    // Creation ends here: what the constructor set is seen by every later callback.
    server::callback_ends(this);
    server::callback_ends(&queue_);
    site_.hub.subscribe(this);
  }

  void on_cycle(const CycleTelemetry& cycle) override {
    if (cycle.cycle % decimation_ != 0) return;
    if (cycle.task_id != task_id_) {
      task_id_ = cycle.task_id;
      task_name_ = site_.task_name(task_id_);
      behaviours_ = site_.behaviours(task_id_);
    }
    std::lock_guard lock(mutex_);
    if (finishing_) return;
    if (queue_.size() >= kMaxQueuedTelemetry && !queue_.empty()) {
      // The front may be in flight; drop the next oldest.
      queue_.erase(queue_.begin() + (writing_ ? 1 : 0));
    }
    queue_.emplace_back();
    server::to_wire(cycle, task_name_, behaviours_, site_.executor.period(), &queue_.back());
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
    std::lock_guard lock(mutex_);
    finishing_ = true;
    // A write in flight finishes the call in OnWriteDone (or the server's shutdown deadline
    // cancels a write that a client never reads).
    end_status_ = Status(StatusCode::UNAVAILABLE, "the remote site is shutting down");
    if (!writing_ && !finished_) {
      finished_ = true;
      Finish(end_status_);
    }
  }

  void OnDone() override {
    server::callback_begins(this);
    server::callback_begins(&queue_);
    site_.hub.unsubscribe(this);
    delete this;
  }

 private:
  RemoteSiteServer::Impl& site_;
  std::uint32_t decimation_;
  std::uint64_t task_id_ = ~0ULL;
  std::string task_name_;
  std::vector<v1::Behaviour> behaviours_;
  std::mutex mutex_;
  std::deque<v1::Telemetry> queue_;
  Status end_status_;  // what the stream ends with once finishing (OK: the client is done)
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

}  // namespace

grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>*
RemoteSiteServer::Impl::Teleoperate(CallbackServerContext* context) {
  using Refused = RefusedStream<grpc::ServerBidiReactor<v1::TeleopIncrement, v1::ForceReflection>>;
  Status status = control(context);
  if (!status.ok()) return new Refused(status);
  if (teleop_open.exchange(true)) {
    return new Refused(Status(StatusCode::FAILED_PRECONDITION,
                              "a teleoperation stream is already open on this arm"));
  }
  return new TeleopReactor(*this, operator_of(context));
}

grpc::ServerWriteReactor<v1::Telemetry>* RemoteSiteServer::Impl::StreamTelemetry(
    CallbackServerContext* /*context*/, const v1::TelemetryRequest* request) {
  return new TelemetryReactor(*this, request->decimation());
}

RemoteSiteServer::RemoteSiteServer(const ServerOptions& options, Executor& executor,
                                   ControlLoop& loop, HandControllerQueue& queue,
                                   const std::string& arm_name)
    : impl_(std::make_unique<Impl>(options, executor, loop, queue, arm_name)) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.address, grpc::InsecureServerCredentials(), &impl_->bound_port);
  builder.RegisterService(impl_.get());
  impl_->grpc_server = builder.BuildAndStart();
  if (!impl_->grpc_server || impl_->bound_port == 0) {
    throw std::runtime_error("cannot serve on '" + options.address +
                             "' (address in use or malformed)");
  }
  impl_->grpc_server->GetHealthCheckService()->SetServingStatus(kServiceName, true);
  impl_->hub.start();
  spdlog::info("remote site '{}' serving {} on port {}", options.site_name, kServiceName,
               impl_->bound_port);
}

RemoteSiteServer::~RemoteSiteServer() { shutdown(); }

int RemoteSiteServer::port() const { return impl_->bound_port; }

void RemoteSiteServer::shutdown() {
  if (!impl_->grpc_server) return;
  impl_->grpc_server->GetHealthCheckService()->SetServingStatus(kServiceName, false);
  // tether's own streams end at once; a write a client never reads is cancelled when the
  // deadline passes, and the hub must keep serving the streams until then.
  impl_->hub.end_streams();
  impl_->grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  impl_->hub.stop();
  impl_->grpc_server.reset();
}

}  // namespace tether::remote
