#include "audit_log.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tether::remote::server {

namespace {

constexpr std::size_t kMemoryLines = 10000;

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char full[48];
  std::snprintf(full, sizeof full, "%s.%03dZ", text, static_cast<int>(ms));
  return full;
}

}  // namespace

AuditLog::AuditLog(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ignored;
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    throw std::runtime_error("audit trail '" + path_ + "': cannot be opened for appending (" +
                             std::strerror(errno) + ")");
  }
}

AuditLog::~AuditLog() {
  if (fd_ >= 0) ::close(fd_);
}

std::string AuditLog::to_json(const AuditRecord& record, const std::string& time) {
  nlohmann::ordered_json line = {{"time", time},
                                 {"identity", record.identity},
                                 {"role", to_string(record.role)},
                                 {"authenticated", record.authenticated},
                                 {"call", record.call}};
  if (!record.task.empty()) line["task"] = record.task;
  if (record.revision != 0) line["revision"] = record.revision;
  line["outcome"] = record.outcome;
  if (!record.detail.empty()) line["detail"] = record.detail;
  // Invalid UTF-8 (a name from a plaintext caller) is replaced, never a reason to lose a line.
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void AuditLog::append(const AuditRecord& record) {
  const std::string line = to_json(record, utc_now()) + "\n";
  std::lock_guard lock(mutex_);
  if (listener_) listener_(line.substr(0, line.size() - 1));
  if (fd_ < 0) {
    if (memory_.size() >= kMemoryLines) memory_.erase(memory_.begin());
    memory_.push_back(line.substr(0, line.size() - 1));
    return;
  }
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::error("audit trail '{}': write failed ({}): {}", path_, std::strerror(errno), line);
      return;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) {
    spdlog::error("audit trail '{}': fsync failed ({})", path_, std::strerror(errno));
  }
}

void AuditLog::set_listener(std::function<void(const std::string& line)> listener) {
  std::lock_guard lock(mutex_);
  listener_ = std::move(listener);
}

std::vector<std::string> AuditLog::read(std::uint64_t first, std::size_t max,
                                        std::uint64_t& next) const {
  std::vector<std::string> lines;
  next = first;
  if (path_.empty()) {
    std::lock_guard lock(mutex_);
    for (std::uint64_t i = first; i < memory_.size() && lines.size() < max; ++i) {
      lines.push_back(memory_[i]);
      next = i + 1;
    }
    return lines;
  }
  std::ifstream in(path_);
  std::string line;
  std::uint64_t index = 0;
  while (lines.size() < max && std::getline(in, line)) {
    if (index >= first) {
      lines.push_back(line);
      next = index + 1;
    }
    ++index;
  }
  return lines;
}

}  // namespace tether::remote::server
