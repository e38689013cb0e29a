#pragma once

// The remote site's audit trail: one JSON object per line, appended and fsync'd before the
// call that caused it is answered, so a crash never loses an answered call's record.
//
//   {"time":"2026-11-24T22:47:15.123Z","identity":"alice","role":"operator",
//    "authenticated":true,"call":"StartTask","task":"door_force","revision":3,
//    "outcome":"OK","detail":"task #7"}
//
// Recorded: every controlling call (lease, upload, delete, start, reset, update, set), every
// stop, every breach (identity "site"), a refused call that needed more than an observer,
// and each teleoperation stream at its opening and its end, with its counts (never per
// increment). The control lease's lapse is recorded too (call "LeaseLapsed", identity the
// former holder, about 0.1 s after it); an AcquireControl that only renews the caller's own
// lease is not (a console renews every 1.5 s). outcome is "OK" or gRPC's code and the
// message ("PERMISSION_DENIED: ...").

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tether/common/vocabulary.h"

namespace tether::remote::server {

struct AuditRecord {
  std::string identity;
  Role role = Role::kNone;
  bool authenticated = false;
  std::string call;
  std::string task;            // empty when the call names none
  std::uint64_t revision = 0;  // 0 when not applicable
  std::string outcome = "OK";
  std::string detail;
};

class AuditLog {
 public:
  // `path` empty: records go to the log only (an in-memory site for tests).
  explicit AuditLog(std::string path);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Appends and fsyncs one line; stamps the time. Never throws: a write that fails is
  // logged as an error (the call it records has already happened).
  void append(const AuditRecord& record);
  // Also hands every line appended from now on to `listener` (the black box), under the
  // log's lock so lines arrive in order; nullptr: none.
  void set_listener(std::function<void(const std::string& line)> listener);

  // Lines [first, first + max) of the trail, oldest first; `next` is the index after the
  // last one returned. From the file when there is one, else from memory.
  std::vector<std::string> read(std::uint64_t first, std::size_t max, std::uint64_t& next) const;

  // One line as written (also for tests and `tether audit`).
  static std::string to_json(const AuditRecord& record, const std::string& time);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  mutable std::mutex mutex_;
  std::function<void(const std::string&)> listener_;
  int fd_ = -1;
  std::vector<std::string> memory_;  // without a file: the newest kMemoryLines
};

}  // namespace tether::remote::server
