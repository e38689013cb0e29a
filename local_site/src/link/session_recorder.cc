#include "tether/local/link/session_recorder.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>

#include "tether/mcap/writer.h"
#include "tether/proto/mcap_schema.h"
#include "tether/proto/recording_topics.h"
#include "tether/proto/set_field.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::local {

namespace {

enum Channel : int { kTelemetry, kSent, kReflections, kTasks, kChannels };

std::uint64_t unix_now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

v1::DataPlane to_plane(DataPlane plane) {
  switch (plane) {
    case DataPlane::kDatagram:
      return v1::DATA_PLANE_DATAGRAM;
    case DataPlane::kStream:
      return v1::DATA_PLANE_STREAM;
    case DataPlane::kNone:
      break;
  }
  return v1::DATA_PLANE_UNSPECIFIED;
}

}  // namespace

SessionRecorder::SessionRecorder(const std::string& path, const std::string& recorder,
                                 std::map<std::string, std::string> site)
    : path_(path) {
  mcap::WriterOptions options;
  options.compression = mcap::Compression::kZstd;
  options.profile = "tether";
  writer_ = std::make_unique<mcap::Writer>(path, options);
  site["recorder"] = recorder;
  writer_->add_metadata(recording::kSiteMetadata, site);
  channels_.resize(kChannels);
  channels_[kTelemetry] =
      proto::add_protobuf_channel<v1::Telemetry>(*writer_, recording::kTelemetry);
  channels_[kSent] =
      proto::add_protobuf_channel<v1::SentIncrement>(*writer_, recording::kGroundIncrements);
  channels_[kReflections] =
      proto::add_protobuf_channel<v1::ForceReflection>(*writer_, recording::kGroundReflections);
  channels_[kTasks] = proto::add_protobuf_channel<v1::RecordedTask>(*writer_, recording::kTasks);
  thread_ = std::thread([this] { run(); });
}

SessionRecorder::~SessionRecorder() {
  try {
    close();
  } catch (const std::exception&) {
    // The destructor of a recording that failed to close: close() already said why when
    // it was called; nothing more can be done here.
  }
}

void SessionRecorder::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    closing_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  writer_->close();
  std::lock_guard lock(mutex_);
  bytes_ = writer_->bytes_written();
}

std::uint64_t SessionRecorder::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

std::uint64_t SessionRecorder::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

void SessionRecorder::push(int channel, std::uint64_t log_ns, std::string data) {
  std::lock_guard lock(mutex_);
  if (closing_) return;
  queue_.push_back(Item{channel, log_ns, std::move(data)});
}

void SessionRecorder::telemetry(const v1::Telemetry& message) {
  const std::int64_t t = message.timing().sample_unix_ns();
  push(kTelemetry, t > 0 ? static_cast<std::uint64_t>(t) : unix_now_ns(),
       message.SerializeAsString());
}

void SessionRecorder::sent(const v1::TeleopIncrement& message, DataPlane plane) {
  v1::SentIncrement sent;
  *sent.mutable_increment() = message;
  sent.set_plane(to_plane(plane));
  push(kSent, unix_now_ns(), sent.SerializeAsString());
}

void SessionRecorder::reflection(const v1::ForceReflection& message) {
  push(kReflections, unix_now_ns(), message.SerializeAsString());
}

void SessionRecorder::uploaded(const std::string& name, const TaskParameters& task) {
  std::lock_guard lock(mutex_);
  uploads_[name] = task;
}

bool SessionRecorder::knows_id(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  return ids_.count(id) != 0;
}

bool SessionRecorder::knows(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return uploads_.count(name) != 0;
}

void SessionRecorder::started(std::uint64_t id, const std::string& name) {
  TaskParameters task;
  {
    std::lock_guard lock(mutex_);
    const auto found = uploads_.find(name);
    // Started from a set uploaded before the recording began: its parameters are not here;
    // the start is still recorded, by name.
    if (found != uploads_.end()) task = found->second;
  }
  record_task(id, name, task, true);
}

void SessionRecorder::updated(std::uint64_t id, const TaskParameters& task) {
  record_task(id, "", task, false);
}

void SessionRecorder::set_fields(std::uint64_t id,
                                 const std::vector<std::pair<std::string, std::string>>& fields) {
  std::optional<TaskParameters> previous;
  {
    std::lock_guard lock(mutex_);
    previous = last_task_;
  }
  // Without the set it changed (started before the recording) the change is not recorded:
  // a replay then says which task it lacks.
  if (!previous) return;
  v1::TaskParameters message = proto::from_task(*previous);
  for (const auto& [path, value] : fields) proto::set_field(message, path, value);
  record_task(id, "", proto::to_task(message), false);
}

void SessionRecorder::record_task(std::uint64_t id, const std::string& name,
                                  const TaskParameters& task, bool restart) {
  {
    std::lock_guard lock(mutex_);
    last_task_ = task;
    ids_.insert(id);
  }
  v1::RecordedTask message;
  message.set_id(id);
  message.set_name(name);
  message.set_restart(restart);
  *message.mutable_task() = proto::from_task(task);
  push(kTasks, unix_now_ns(), message.SerializeAsString());
}

void SessionRecorder::run() {
  try {
    write_until_closed();
  } catch (const std::exception& e) {
    // A full or failing disk ends the recording, never the session it records.
    spdlog::error("recording {}: stopped: {}", path_, e.what());
    std::lock_guard lock(mutex_);
    closing_ = true;
    queue_.clear();
  }
}

void SessionRecorder::write_until_closed() {
  std::vector<Item> batch;
  auto last_sync = std::chrono::steady_clock::now();
  while (true) {
    bool closing = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(20), [&] { return closing_; });
      batch.swap(queue_);
      closing = closing_;
    }
    for (const Item& item : batch) {
      writer_->write(channels_[static_cast<std::size_t>(item.channel)], item.log_ns, item.log_ns,
                     item.data);
    }
    {
      std::lock_guard lock(mutex_);
      messages_ += batch.size();
    }
    batch.clear();
    if (closing) return;
    // A station that dies keeps a readable file up to its last second.
    if (std::chrono::steady_clock::now() - last_sync >= std::chrono::seconds(1)) {
      writer_->sync();
      last_sync = std::chrono::steady_clock::now();
    }
  }
}

}  // namespace tether::local
