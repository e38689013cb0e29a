#pragma once

// A ground station's MCAP recording of a session (docs/recordings.md): the remote's
// telemetry of every cycle as it arrived (with the inputs each cycle took: what `tether
// replay` needs), every increment as this station sent it and on which plane, every force
// reflection as it arrived, and the task sets started — the remote's and the ground's view of
// each increment side by side, so latency and loss can be read from the file.
//
// Taps are called from the link's threads (telemetry reader, the teleoperation sender and
// its readers); each serializes its message and queues it. A writer thread of the recorder's
// own writes, compresses and, every second, flushes and fsyncs: a station that dies keeps a
// readable file up to its last second. Channels and schemas: tether/proto/recording_topics.h.

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tether/common/vocabulary.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::v1 {
class Telemetry;
class TeleopIncrement;
class ForceReflection;
}  // namespace tether::v1

namespace tether::mcap {
class Writer;
}

namespace tether::local {

class SessionRecorder {
 public:
  // Creates `path` (truncating it) and starts writing. `recorder` says who wrote the file
  // ("tether-ground", "tether record"); `site` goes into the "tether.site" metadata. Throws
  // std::runtime_error naming the path when it cannot be written.
  SessionRecorder(const std::string& path, const std::string& recorder,
                  std::map<std::string, std::string> site);
  ~SessionRecorder();
  SessionRecorder(const SessionRecorder&) = delete;
  SessionRecorder& operator=(const SessionRecorder&) = delete;

  // Writes what is queued, the summary and the footer. Idempotent; throws on a write error.
  void close();
  const std::string& path() const { return path_; }
  std::uint64_t messages() const;
  std::uint64_t bytes() const;  // after close(): the file's size

  // ---- taps (any thread) ----
  void telemetry(const v1::Telemetry& message);
  void sent(const v1::TeleopIncrement& message, DataPlane plane);
  void reflection(const v1::ForceReflection& message);
  // Task sets: an upload is remembered by name, so a start can record what it started.
  void uploaded(const std::string& name, const TaskParameters& task);
  bool knows(const std::string& name) const;  // an upload of that name was recorded
  bool knows_id(std::uint64_t id) const;      // the set of that executor id was recorded
  void started(std::uint64_t id, const std::string& name);
  void updated(std::uint64_t id, const TaskParameters& task);
  // SetParameter: the fields applied to the set of the newest id recorded, as the site does.
  void set_fields(std::uint64_t id, const std::vector<std::pair<std::string, std::string>>& fields);

 private:
  struct Item {
    int channel = 0;
    std::uint64_t log_ns = 0;
    std::string data;
  };
  void push(int channel, std::uint64_t log_ns, std::string data);
  void run();
  void write_until_closed();
  void record_task(std::uint64_t id, const std::string& name, const TaskParameters& task,
                   bool restart);

  std::string path_;
  std::unique_ptr<mcap::Writer> writer_;
  std::vector<std::uint16_t> channels_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Item> queue_;
  bool closing_ = false;
  std::uint64_t messages_ = 0;
  std::uint64_t bytes_ = 0;
  std::map<std::string, TaskParameters> uploads_;
  std::optional<TaskParameters> last_task_;  // of the newest id recorded
  std::set<std::uint64_t> ids_;              // executor ids whose sets were recorded
  std::thread thread_;
  bool closed_ = false;
};

}  // namespace tether::local
