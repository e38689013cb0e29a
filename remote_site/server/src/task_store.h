#pragma once

// Task parameter sets stored on the remote site by name, validated against the arm before
// they are kept. With a directory they persist as <name>.textproto (first line: the
// revision) and are loaded again at start-up, so a restarted remote site keeps what the
// ground uploaded. Every write is atomic and durable before the upload is answered (see
// durable_file.h); a stored file that no longer parses or validates is reported and moved
// to <directory>/rejected/ at start-up, and the site starts without it.

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tether/common/kinematics.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote::server {

struct StoredTask {
  std::string name;
  std::uint64_t revision = 0;
  TaskParameters task;
};

// A name that is malformed, taken or unknown; the message says which and why.
class TaskStoreError : public std::runtime_error {
 public:
  enum class Kind { kInvalidName, kExists, kNotFound, kIo };
  TaskStoreError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class TaskStore {
 public:
  // `directory` empty: memory only. Sets in the directory that no longer parse or validate
  // are moved aside (rejected()) with an error in the log.
  TaskStore(const KinematicModel& model, std::string directory);

  // Validates (TaskValidationError lists every problem) and stores; returns the revision.
  std::uint64_t put(const std::string& name, TaskParameters task, bool replace);
  std::optional<StoredTask> get(const std::string& name) const;
  std::vector<StoredTask> list() const;
  void remove(const std::string& name);

  static bool valid_name(const std::string& name);
  // File names moved aside at start-up.
  const std::vector<std::string>& rejected() const { return rejected_; }

 private:
  void load_directory();
  void quarantine(const std::filesystem::path& path, const std::string& reason);
  std::string path_of(const std::string& name) const;

  const KinematicModel& model_;
  std::string directory_;
  mutable std::mutex mutex_;
  std::map<std::string, StoredTask> tasks_;
  std::vector<std::string> rejected_;
};

}  // namespace tether::remote::server
