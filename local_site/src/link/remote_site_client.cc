#include "tether/local/link/remote_site_client.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "camera_connection.h"
#include "link/channel.h"
#include "link/wire.h"
#include "tether/local/link/session_recorder.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.grpc.pb.h"

namespace tether::local {

const char* to_string(RemoteCode code) {
  switch (code) {
    case RemoteCode::kOk:
      return "OK";
    case RemoteCode::kCancelled:
      return "CANCELLED";
    case RemoteCode::kUnknown:
      return "UNKNOWN";
    case RemoteCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case RemoteCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case RemoteCode::kNotFound:
      return "NOT_FOUND";
    case RemoteCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case RemoteCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case RemoteCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case RemoteCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case RemoteCode::kAborted:
      return "ABORTED";
    case RemoteCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case RemoteCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case RemoteCode::kInternal:
      return "INTERNAL";
    case RemoteCode::kUnavailable:
      return "UNAVAILABLE";
    case RemoteCode::kDataLoss:
      return "DATA_LOSS";
    case RemoteCode::kUnauthenticated:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

RemoteError::RemoteError(const std::string& call, const std::string& address, RemoteCode code,
                         const std::string& message)
    : std::runtime_error(call + " on " + address + ": " + to_string(code) + ": " + message),
      code_(code),
      message_(message) {}

bool RemoteError::unreachable() const {
  return code_ == RemoteCode::kUnavailable || code_ == RemoteCode::kDeadlineExceeded;
}

std::string default_operator_name() {
  const char* user = std::getenv("USER");
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(user != nullptr && *user != '\0' ? user : "operator") + "@" +
         (host[0] != '\0' ? host : "localhost");
}

namespace {

constexpr const char* kOperatorKey = "tether-operator";

RemoteError to_error(const char* call, const std::string& address, const grpc::Status& status) {
  return RemoteError(call, address, static_cast<RemoteCode>(status.error_code()),
                     status.error_message());
}

}  // namespace

struct RemoteSiteClient::Impl {
  std::string address;
  std::string operator_name;
  bool insecure = false;
  std::chrono::milliseconds deadline;
  std::shared_ptr<grpc::Channel> channel;
  std::shared_ptr<v1::RemoteSite::Stub> stub;
  std::atomic<SessionRecorder*> recorder{nullptr};

  // The round trip as measured [ns]: half the first connection's handshakes (TCP and TLS),
  // then the least time a call took; 0 before either.
  mutable std::atomic<std::int64_t> round_trip_ns{0};

  // The deadline follows the path. A connection still to be made gets up to
  // kConnectAllowance of its own (TCP, TLS and HTTP/2 handshakes, with retransmissions on a
  // lossy path of seconds), ending at once if the site refuses; the call then gets four
  // measured round trips (never less than the configured deadline) plus room for TCP's
  // retransmissions. A path of 1 s each way works with the default 5 s; on loopback a
  // short deadline stays short.
  void connect() const {
    const auto begin = std::chrono::steady_clock::now();
    const auto until = std::chrono::system_clock::now() + kConnectAllowance;
    grpc_connectivity_state state = channel->GetState(true);
    while (state != GRPC_CHANNEL_READY && std::chrono::system_clock::now() < until) {
      if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) return;
      channel->WaitForStateChange(state, until);
      state = channel->GetState(true);
    }
    if (state == GRPC_CHANNEL_READY) {
      const std::int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - begin)
                                    .count();
      std::int64_t expected = 0;
      round_trip_ns.compare_exchange_strong(expected, took / 2);
    }
  }

  std::chrono::milliseconds effective_deadline() const {
    const std::int64_t rtt_ms = round_trip_ns.load() / 1000000;
    // Room for TCP to resend a lost segment three times (its retransmission timeout starts
    // at 200 ms to 1 s on top of the round trip and doubles): a lossy path otherwise fails
    // calls that would have succeeded. Only for a deadline of a second or more (a person's
    // patience, the default 5 s): a caller who asked for less wants to know quickly.
    const std::int64_t recovery_ms = deadline >= std::chrono::seconds(1) ? 3 * (rtt_ms + 1000) : 0;
    return std::max(deadline, std::chrono::milliseconds(4 * rtt_ms)) +
           std::chrono::milliseconds(recovery_ms);
  }

  void prepare(grpc::ClientContext& context) const {
    if (insecure) context.AddMetadata(kOperatorKey, operator_name);
    if (channel->GetState(false) != GRPC_CHANNEL_READY) connect();
    context.set_deadline(std::chrono::system_clock::now() + effective_deadline());
  }

  template <typename Request, typename Reply>
  Reply call(const char* name,
             grpc::Status (v1::RemoteSite::Stub::*method)(grpc::ClientContext*, const Request&,
                                                          Reply*),
             const Request& request) const {
    grpc::ClientContext context;
    prepare(context);
    Reply reply;
    const auto begin = std::chrono::steady_clock::now();
    const grpc::Status status = ((*stub).*method)(&context, request, &reply);
    if (!status.ok()) throw to_error(name, address, status);
    const std::int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - begin)
                                  .count();
    std::int64_t best = round_trip_ns.load();
    while ((best == 0 || took < best) && !round_trip_ns.compare_exchange_weak(best, took)) {
    }
    return reply;
  }
  static constexpr std::chrono::milliseconds kConnectAllowance{30000};
};

RemoteSiteClient::RemoteSiteClient(std::string address, const ClientOptions& options)
    : impl_(std::make_shared<Impl>()) {
  impl_->address = std::move(address);
  SiteChannel site = open_site_channel(
      impl_->address, options.credentials,
      options.operator_name.empty() ? default_operator_name() : options.operator_name);
  impl_->operator_name = site.identity;
  impl_->insecure = site.insecure;
  impl_->deadline = options.deadline;
  impl_->channel = std::move(site.channel);
  impl_->stub = v1::RemoteSite::NewStub(impl_->channel);
}

RemoteSiteClient::~RemoteSiteClient() = default;

const std::string& RemoteSiteClient::address() const { return impl_->address; }
const std::string& RemoteSiteClient::operator_name() const { return impl_->operator_name; }

SiteStatus RemoteSiteClient::status() {
  return wire::to_domain(
      impl_->call("GetStatus", &v1::RemoteSite::Stub::GetStatus, v1::GetStatusRequest{}));
}

std::string RemoteSiteClient::acquire_control(bool force) {
  v1::AcquireControlRequest request;
  request.set_force(force);
  return impl_->call("AcquireControl", &v1::RemoteSite::Stub::AcquireControl, request).controller();
}

std::vector<std::string> RemoteSiteClient::audit(std::uint64_t first, std::uint32_t max,
                                                 std::uint64_t& next) {
  v1::GetAuditRequest request;
  request.set_first(first);
  request.set_max(max);
  v1::GetAuditReply reply = impl_->call("GetAudit", &v1::RemoteSite::Stub::GetAudit, request);
  next = reply.next();
  return {reply.lines().begin(), reply.lines().end()};
}

void RemoteSiteClient::fetch_black_box(
    const BlackBoxQuery& query, const std::function<void(const BlackBoxSegmentInfo&)>& on_segment,
    const std::function<void(const std::string& data, bool last)>& on_data) {
  v1::FetchBlackBoxRequest request;
  if (query.unix_ns) request.set_unix_ns(*query.unix_ns);
  if (!query.breach_id.empty()) request.set_breach_id(query.breach_id);
  request.set_before_s(query.before);
  request.set_after_s(query.after);
  request.set_list_only(query.list_only);
  request.set_all(query.all);
  grpc::ClientContext context;
  impl_->prepare(context);
  // Bytes of minutes of telemetry: the call's deadline is for reaching the site and its
  // answer starting, not for how long a slow path takes to carry them.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::hours(1));
  auto stream = impl_->stub->FetchBlackBox(&context, request);
  v1::BlackBoxData piece;
  while (stream->Read(&piece)) {
    if (piece.has_segment()) {
      const v1::BlackBoxSegment& s = piece.segment();
      BlackBoxSegmentInfo info;
      info.name = s.name();
      info.start_unix_ns = s.start_unix_ns();
      info.end_unix_ns = s.end_unix_ns();
      info.bytes = s.bytes();
      info.breaches.assign(s.breaches().begin(), s.breaches().end());
      info.complete = s.complete();
      on_segment(info);
    }
    if (!query.list_only) on_data(piece.data(), piece.last());
  }
  const grpc::Status status = stream->Finish();
  if (!status.ok()) throw to_error("FetchBlackBox", impl_->address, status);
}

void RemoteSiteClient::release_control() {
  impl_->call("ReleaseControl", &v1::RemoteSite::Stub::ReleaseControl, v1::ReleaseControlRequest{});
}

UploadResult RemoteSiteClient::upload(const std::string& name, const TaskParameters& task,
                                      bool replace) {
  v1::UploadTaskRequest request;
  request.set_name(name);
  *request.mutable_task() = proto::from_task(task);
  request.set_replace(replace);
  const auto reply = impl_->call("UploadTask", &v1::RemoteSite::Stub::UploadTask, request);
  if (SessionRecorder* r = impl_->recorder.load()) r->uploaded(name, task);
  return {reply.name(), reply.revision()};
}

std::vector<TaskSummary> RemoteSiteClient::list() {
  const auto reply =
      impl_->call("ListTasks", &v1::RemoteSite::Stub::ListTasks, v1::ListTasksRequest{});
  std::vector<TaskSummary> out;
  out.reserve(static_cast<std::size_t>(reply.tasks_size()));
  for (const auto& t : reply.tasks()) out.push_back(wire::to_domain(t));
  return out;
}

std::pair<TaskSummary, TaskParameters> RemoteSiteClient::get(const std::string& name) {
  v1::GetTaskRequest request;
  request.set_name(name);
  const auto reply = impl_->call("GetTask", &v1::RemoteSite::Stub::GetTask, request);
  return {wire::to_domain(reply.summary()), proto::to_task(reply.task())};
}

void RemoteSiteClient::remove(const std::string& name) {
  v1::DeleteTaskRequest request;
  request.set_name(name);
  impl_->call("DeleteTask", &v1::RemoteSite::Stub::DeleteTask, request);
}

void RemoteSiteClient::set_recorder(SessionRecorder* recorder) { impl_->recorder.store(recorder); }

std::uint64_t RemoteSiteClient::start(const std::string& name) {
  v1::StartTaskRequest request;
  request.set_name(name);
  // A recording names what it started: a set uploaded before it began is read back first.
  if (SessionRecorder* r = impl_->recorder.load(); r != nullptr && !r->knows(name)) {
    r->uploaded(name, get(name).second);
  }
  const std::uint64_t id =
      impl_->call("StartTask", &v1::RemoteSite::Stub::StartTask, request).task_id();
  if (SessionRecorder* r = impl_->recorder.load()) r->started(id, name);
  return id;
}

ExecutorState RemoteSiteClient::stop() {
  return proto::to_executor_state(
      impl_->call("Stop", &v1::RemoteSite::Stub::Stop, v1::StopRequest{}).state(), "state");
}

ResetResult RemoteSiteClient::reset() {
  try {
    const auto reply = impl_->call("Reset", &v1::RemoteSite::Stub::Reset, v1::ResetRequest{});
    return {reply.accepted(), reply.message()};
  } catch (const RemoteError& e) {
    // The site refuses a reset it cannot grant (the breach persists, nothing is stopped)
    // with FAILED_PRECONDITION and says why: a refusal, not a failed call.
    if (e.code() == RemoteCode::kFailedPrecondition) return {false, e.message()};
    throw;
  }
}

RecoveryStatus RemoteSiteClient::recover(const RecoveryMotion& motion) {
  v1::RecoverRequest request;
  if (motion.joint > 0) {
    v1::JointJog* jog = request.mutable_jog();
    jog->set_joint(motion.joint);
    jog->set_distance(motion.distance);
    jog->set_speed(motion.speed);
  } else {
    v1::Retreat* retreat = request.mutable_retreat();
    retreat->set_distance(motion.distance);
    retreat->set_speed(motion.speed);
  }
  const v1::RecoverReply reply = impl_->call("Recover", &v1::RemoteSite::Stub::Recover, request);
  v1::SiteStatus status;
  *status.mutable_recovery() = reply.status();
  return wire::to_domain(status).recovery;
}

std::uint64_t RemoteSiteClient::update(const TaskParameters& task) {
  v1::UpdateTaskRequest request;
  *request.mutable_task() = proto::from_task(task);
  const std::uint64_t id =
      impl_->call("UpdateTask", &v1::RemoteSite::Stub::UpdateTask, request).task_id();
  if (SessionRecorder* r = impl_->recorder.load()) r->updated(id, task);
  return id;
}

std::uint64_t RemoteSiteClient::set_parameter(const std::string& path, const std::string& value) {
  return set_parameters({{path, value}});
}

std::uint64_t RemoteSiteClient::set_parameters(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  if (fields.empty()) throw std::invalid_argument("set_parameters: no field given");
  v1::SetParameterRequest request;
  request.set_path(fields.front().first);
  request.set_value(fields.front().second);
  for (std::size_t i = 1; i < fields.size(); ++i) {
    v1::ParameterValue* more = request.add_more();
    more->set_path(fields[i].first);
    more->set_value(fields[i].second);
  }
  const std::uint64_t id =
      impl_->call("SetParameter", &v1::RemoteSite::Stub::SetParameter, request).task_id();
  if (SessionRecorder* r = impl_->recorder.load()) r->set_fields(id, fields);
  return id;
}

// ---- telemetry ----

struct TelemetrySubscription::State {
  std::string address;
  std::shared_ptr<v1::RemoteSite::Stub> stub;
  grpc::ClientContext context;
  std::thread reader;

  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<TelemetrySample> buffer;
  SessionRecorder* recorder = nullptr;  // every message as it arrived, when recording
  std::string operator_name;            // insecure links name the caller in metadata
  bool keep = true;                     // false: recorded only, never buffered for next()
  bool ended = false;
  bool cancelled = false;
  std::optional<RemoteError> error;
  std::uint64_t dropped = 0;

  void record_started(std::uint64_t id, const std::string& name) {
    if (name.empty()) return;
    grpc::ClientContext call;
    if (!operator_name.empty()) call.AddMetadata(kOperatorKey, operator_name);
    call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetTaskRequest request;
    request.set_name(name);
    v1::GetTaskReply reply;
    if (!stub->GetTask(&call, request, &reply).ok()) return;
    try {
      recorder->uploaded(name, proto::to_task(reply.task()));
      recorder->started(id, name);
    } catch (const std::exception&) {
      // A set this build cannot read is not recorded; a replay then says it lacks it.
    }
  }

  void read(const v1::TelemetryRequest& request) {
    auto stream = stub->StreamTelemetry(&context, request);
    v1::Telemetry message;
    std::optional<RemoteError> failure;
    while (stream->Read(&message)) {
      if (recorder != nullptr) {
        recorder->telemetry(message);
        // A task another client started: its set is read back, so the recording can replay.
        const v1::CycleInputs& in = message.inputs();
        if (in.submission() != 0 && in.restart() && !recorder->knows_id(in.submission())) {
          record_started(in.submission(), message.task_name());
        }
      }
      if (!keep) continue;
      TelemetrySample sample;
      try {
        sample = wire::to_domain(message);
      } catch (const std::exception& e) {
        failure.emplace("StreamTelemetry", address, RemoteCode::kDataLoss, e.what());
        context.TryCancel();
        break;
      }
      std::lock_guard lock(mutex);
      if (buffer.size() >= kMaxBuffered) {
        buffer.pop_front();
        ++dropped;
      }
      buffer.push_back(std::move(sample));
      arrived.notify_one();
    }
    const grpc::Status status = stream->Finish();
    std::lock_guard lock(mutex);
    if (failure)
      error = std::move(failure);
    else if (!status.ok() && !cancelled)
      error = to_error("StreamTelemetry", address, status);
    ended = true;
    arrived.notify_all();
  }
};

TelemetrySubscription::TelemetrySubscription(std::unique_ptr<State> state)
    : state_(std::move(state)) {}
TelemetrySubscription::TelemetrySubscription(TelemetrySubscription&&) noexcept = default;

TelemetrySubscription& TelemetrySubscription::operator=(TelemetrySubscription&& other) noexcept {
  if (this != &other) {
    cancel();
    if (state_ && state_->reader.joinable()) state_->reader.join();
    state_ = std::move(other.state_);
  }
  return *this;
}

TelemetrySubscription::~TelemetrySubscription() {
  if (!state_) return;
  cancel();
  if (state_->reader.joinable()) state_->reader.join();
}

TelemetrySubscription::Next TelemetrySubscription::next(TelemetrySample& sample,
                                                        std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  state_->arrived.wait_for(lock, timeout,
                           [this] { return !state_->buffer.empty() || state_->ended; });
  if (!state_->buffer.empty()) {
    sample = std::move(state_->buffer.front());
    state_->buffer.pop_front();
    return Next::kSample;
  }
  if (!state_->ended) return Next::kTimeout;
  if (state_->error) throw *state_->error;
  return Next::kEnded;
}

void TelemetrySubscription::cancel() {
  if (!state_) return;
  {
    std::lock_guard lock(state_->mutex);
    state_->cancelled = true;
  }
  state_->context.TryCancel();
}

std::uint64_t TelemetrySubscription::dropped() const {
  std::lock_guard lock(state_->mutex);
  return state_->dropped;
}

// A telemetry stream read on a thread of its own: kept for next(), recorded, or both.
TelemetrySubscription RemoteSiteClient::open_telemetry(std::uint32_t decimation,
                                                       SessionRecorder* recorder, bool keep) {
  auto state = std::make_unique<TelemetrySubscription::State>();
  state->address = impl_->address;
  state->stub = impl_->stub;
  state->recorder = recorder;
  state->keep = keep;
  if (impl_->insecure) {
    state->context.AddMetadata(kOperatorKey, impl_->operator_name);
    state->operator_name = impl_->operator_name;
  }
  v1::TelemetryRequest request;
  request.set_decimation(decimation);
  // Opening the stream may wait for the connection: the reader thread does it, so a
  // cancel() right after subscribing still ends it (ClientContext cancels a call that
  // starts after TryCancel).
  TelemetrySubscription::State* raw = state.get();
  state->reader = std::thread([raw, request] { raw->read(request); });
  return TelemetrySubscription(std::move(state));
}

std::unique_ptr<CameraView> RemoteSiteClient::watch_camera(const std::string& camera,
                                                           int bit_rate_kbps, VideoFrameSink sink,
                                                           bool eye) {
  auto connection = std::make_shared<CameraView::Connection>();
  connection->stub = impl_->stub;
  const std::string& a = impl_->address;
  std::string host = a.substr(0, a.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  connection->host = host;
  connection->operator_name = impl_->operator_name;
  connection->insecure = impl_->insecure;
  connection->eye = eye;
  return std::make_unique<CameraView>(std::move(connection), camera, bit_rate_kbps,
                                      std::move(sink));
}

void RemoteSiteClient::aim_camera(const std::string& camera, double pan_deg, double tilt_deg) {
  v1::AimCameraRequest request;
  request.set_camera(camera);
  request.set_pan_deg(pan_deg);
  request.set_tilt_deg(tilt_deg);
  impl_->call("AimCamera", &v1::RemoteSite::Stub::AimCamera, request);
}

TelemetrySubscription RemoteSiteClient::record_telemetry(SessionRecorder& recorder) {
  return open_telemetry(1, &recorder, false);
}

TelemetrySubscription RemoteSiteClient::subscribe_telemetry(std::uint32_t decimation) {
  return open_telemetry(decimation, impl_->recorder.load(), true);
}

}  // namespace tether::local
