#include "task_store.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "durable_file.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"

namespace tether::remote::server {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExtension = ".textproto";
// First line of every stored file: its revision survives a restart of the site.
constexpr const char* kRevisionHeader = "# tether task store: revision ";

std::uint64_t revision_of(const std::string& text) {
  const std::string header = kRevisionHeader;
  if (text.compare(0, header.size(), header) != 0) return 1;
  std::uint64_t revision = 0;
  std::istringstream in(text.substr(header.size()));
  in >> revision;
  return revision > 0 ? revision : 1;
}

}  // namespace

TaskStore::TaskStore(const KinematicModel& model, std::string directory)
    : model_(model), directory_(std::move(directory)) {
  if (!directory_.empty()) load_directory();
}

bool TaskStore::valid_name(const std::string& name) { return valid_task_name(name); }

std::string TaskStore::path_of(const std::string& name) const {
  return (fs::path(directory_) / (name + kExtension)).string();
}

void TaskStore::load_directory() {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) {
    throw TaskStoreError(TaskStoreError::Kind::kIo,
                         "task directory '" + directory_ + "': " + ec.message());
  }
  for (const auto& entry : fs::directory_iterator(directory_)) {
    const fs::path& path = entry.path();
    // An upload interrupted by a crash: the stored file it was replacing is intact.
    if (path.string().size() > std::string(kTemporarySuffix).size() &&
        path.string().ends_with(kTemporarySuffix)) {
      spdlog::warn("task store: removing {}, an upload interrupted before it completed",
                   path.string());
      fs::remove(path, ec);
      continue;
    }
    if (!entry.is_regular_file() || path.extension() != kExtension) continue;
    const std::string name = path.stem().string();
    try {
      if (!valid_name(name)) {
        throw std::runtime_error("'" + name + "' is not a task name (1 to " +
                                 std::to_string(kMaxTaskNameLength) + " of A-Z a-z 0-9 _ - .)");
      }
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      TaskParameters task = proto::load_valid_task_file(path.string(), model_);
      task.name = name;
      tasks_[name] = StoredTask{name, revision_of(text.str()), std::move(task)};
    } catch (const std::exception& e) {
      quarantine(path, e.what());
    }
  }
  spdlog::info("task store: {} task(s) from {}", tasks_.size(), directory_);
}

void TaskStore::quarantine(const fs::path& path, const std::string& reason) {
  // Kept for the operator to inspect, out of the way of the next start.
  const fs::path aside_directory = fs::path(directory_) / "rejected";
  const auto stamp = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const std::string base = path.filename().string() + "." + std::to_string(stamp);
  fs::path aside = aside_directory / base;
  // Never over an earlier rejection (two in the same second).
  for (int n = 1; fs::exists(aside) && n < 1000; ++n) {
    aside = aside_directory / (base + "-" + std::to_string(n));
  }
  std::error_code ec;
  fs::create_directories(aside_directory, ec);
  if (!ec) fs::rename(path, aside, ec);
  spdlog::error("task store: {} is not a valid task set and was {}: {}", path.string(),
                ec ? "left in place (" + ec.message() + ")" : "moved to " + aside.string(), reason);
  rejected_.push_back(path.filename().string());
}

std::uint64_t TaskStore::put(const std::string& name, TaskParameters task, bool replace) {
  if (!valid_name(name)) {
    const std::string shown = name.size() > 32 ? name.substr(0, 32) + "..." : name;
    throw TaskStoreError(TaskStoreError::Kind::kInvalidName,
                         "name = '" + shown + "': use 1 to " + std::to_string(kMaxTaskNameLength) +
                             " of A-Z a-z 0-9 _ - .");
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
    // Stored before it is acknowledged: an answered upload survives a crash.
    try {
      write_file_durably(path_of(name),
                         kRevisionHeader + std::to_string(revision) + "\n" + proto::to_text(task));
    } catch (const std::exception& e) {
      throw TaskStoreError(TaskStoreError::Kind::kIo, e.what());
    }
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
  if (tasks_.find(name) == tasks_.end()) {
    throw TaskStoreError(TaskStoreError::Kind::kNotFound, "no task named '" + name + "'");
  }
  if (!directory_.empty()) {
    try {
      remove_file_durably(path_of(name));
    } catch (const std::exception& e) {
      throw TaskStoreError(TaskStoreError::Kind::kIo, e.what());
    }
  }
  tasks_.erase(name);
}

}  // namespace tether::remote::server
