// The audit trail: one JSON object per line, appended (across reopenings), read back in
// pages, names that are not UTF-8 kept readable.

#include "audit_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

namespace tether::remote::server {
namespace {

namespace fs = std::filesystem;

TEST(AuditLog, WritesOneJsonObjectPerLineWithEveryField) {
  const std::string line = AuditLog::to_json(
      AuditRecord{"alice", Role::kOperator, true, "StartTask", "door", 3, "OK", "task #7"},
      "2026-11-24T22:47:15.123Z");
  EXPECT_EQ(line, R"({"time":"2026-11-24T22:47:15.123Z","identity":"alice","role":"operator",)"
                  R"("authenticated":true,"call":"StartTask","task":"door","revision":3,)"
                  R"("outcome":"OK","detail":"task #7"})");
  // Optional fields are left out; a name that is not UTF-8 is replaced, never a lost line.
  const nlohmann::json parsed = nlohmann::json::parse(
      AuditLog::to_json(AuditRecord{"\xff\xfe", Role::kNone, false, "Stop", "", 0, "OK", ""}, "t"));
  EXPECT_FALSE(parsed.contains("task"));
  EXPECT_FALSE(parsed.contains("revision"));
  EXPECT_EQ(parsed["role"], "none");
}

TEST(AuditLog, AppendsAcrossReopeningsAndReadsInPages) {
  const fs::path dir = fs::temp_directory_path() / ("tether_audit_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string path = (dir / "site" / "audit.jsonl").string();  // directory made on open
  {
    AuditLog log(path);
    for (int i = 0; i < 3; ++i) log.append({"alice", Role::kOperator, true, "UploadTask", "", 0, "OK", ""});
  }
  AuditLog log(path);
  log.append({"bob", Role::kAdmin, true, "DeleteTask", "", 0, "OK", ""});
  std::uint64_t next = 0;
  const auto first = log.read(0, 2, next);
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(next, 2U);
  const auto rest = log.read(next, 10, next);
  ASSERT_EQ(rest.size(), 2U);
  EXPECT_EQ(next, 4U);
  EXPECT_EQ(nlohmann::json::parse(rest.back())["identity"], "bob");
  EXPECT_TRUE(log.read(next, 10, next).empty());
  fs::remove_all(dir);
}

TEST(AuditLog, WithoutAFileKeepsTheTrailInMemory) {
  AuditLog log("");
  log.append({"alice", Role::kOperator, true, "Reset", "", 0, "OK", ""});
  std::uint64_t next = 0;
  const auto lines = log.read(0, 10, next);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(nlohmann::json::parse(lines[0])["call"], "Reset");
}

TEST(AuditLog, NamesAFileItCannotOpen) {
  try {
    AuditLog log("/proc/tether-cannot-write/audit.jsonl");
    FAIL() << "opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("audit trail '/proc/tether-cannot-write/audit.jsonl'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tether::remote::server
