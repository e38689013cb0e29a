#include "task_store.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>

#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"

namespace tether::remote::server {

namespace fs = std::filesystem;

TaskStore::TaskStore(const KinematicModel& model, std::string directory)
    : model_(model), directory_(std::move(directory)) {
  if (!directory_.empty()) load_directory();
}

bool TaskStore::valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

void TaskStore::load_directory() {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) {
    throw TaskStoreError(TaskStoreError::Kind::kIo,
                         "task directory '" + directory_ + "': " + ec.message());
  }
  for (const auto& entry : fs::directory_iterator(directory_)) {
    if (entry.path().extension() != ".textproto") continue;
    const std::string name = entry.path().stem().string();
    try {
      TaskParameters task = proto::load_valid_task_file(entry.path().string(), model_);
      tasks_[name] = StoredTask{name, 1, std::move(task)};
    } catch (const std::exception& e) {
      spdlog::warn("task store: skipping {}: {}", entry.path().string(), e.what());
    }
  }
  spdlog::info("task store: {} task(s) from {}", tasks_.size(), directory_);
}

std::uint64_t TaskStore::put(const std::string& name, TaskParameters task, bool replace) {
  if (!valid_name(name)) {
    throw TaskStoreError(TaskStoreError::Kind::kInvalidName,
                         "name = '" + name + "': use 1 to 64 of A-Z a-z 0-9 _ - .");
  }
  task.name = name;
  require_valid_task(task, model_);
  std::lock_guard lock(mutex_);
  auto it = tasks_.find(name);
  if (it != tasks_.end() && !replace) {
    throw TaskStoreError(TaskStoreError::Kind::kExists, "task '" + name + "' exists (revision " +
                                                            std::to_string(it->second.revision) +
                                                            "); upload with replace");
  }
  const std::uint64_t revision = it == tasks_.end() ? 1 : it->second.revision + 1;
  if (!directory_.empty()) {
    const fs::path path = fs::path(directory_) / (name + ".textproto");
    const fs::path temporary = path.string() + ".tmp";
    {
      std::ofstream out(temporary);
      out << proto::to_text(task);
      if (!out) {
        throw TaskStoreError(TaskStoreError::Kind::kIo,
                             "cannot write '" + temporary.string() + "'");
      }
    }
    fs::rename(temporary, path);
  }
  tasks_[name] = StoredTask{name, revision, std::move(task)};
  return revision;
}

std::optional<StoredTask> TaskStore::get(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = tasks_.find(name);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

std::vector<StoredTask> TaskStore::list() const {
  std::lock_guard lock(mutex_);
  std::vector<StoredTask> out;
  out.reserve(tasks_.size());
  for (const auto& [name, task] : tasks_) out.push_back(task);
  return out;
}

void TaskStore::remove(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (tasks_.erase(name) == 0) {
    throw TaskStoreError(TaskStoreError::Kind::kNotFound, "no task named '" + name + "'");
  }
  if (!directory_.empty()) {
    std::error_code ec;
    fs::remove(fs::path(directory_) / (name + ".textproto"), ec);
  }
}

}  // namespace tether::remote::server
