// A ground station's MCAP recording (session_recorder.h) read back (recording_file.h): what
// the link's taps hand it — telemetry with its inputs and the arm's checkpoint, increments
// sent on either plane, reflections received, task sets uploaded, started and changed field
// by field — comes back whole, with its schemas in the file.

#include "tether/local/link/session_recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "tether/local/link/recording_file.h"
#include "tether/mcap/reader.h"
#include "tether/proto/recording_topics.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::local {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("tether-" + std::to_string(::getpid()) + "-" + name);
}

v1::Telemetry telemetry(std::uint64_t cycle) {
  v1::Telemetry t;
  t.set_cycle(cycle);
  t.set_state(v1::EXECUTOR_STATE_RUNNING);
  t.set_task_id(3);
  t.mutable_timing()->set_sample_unix_ns(1'800'000'000'000'000'000LL +
                                         static_cast<std::int64_t>(cycle) * 1'000'000);
  for (int j = 0; j < 7; ++j) {
    t.mutable_measured_joints()->add_values(0.1 * j + 1e-3 * static_cast<double>(cycle));
    t.mutable_commanded_joints()->add_values(0.1 * j);
  }
  t.mutable_inputs()->mutable_teleop_velocity()->mutable_rotation()->set_x(0.25);
  t.mutable_inputs()->set_teleop_enabled(true);
  if (cycle == 10) {
    t.mutable_inputs()->set_submission(3);
    t.mutable_inputs()->set_restart(true);
    t.mutable_inputs()->set_from_rest(true);
    for (int k = 0; k < 40; ++k) t.add_arm_checkpoint(0.5 * k);
  }
  return t;
}

TEST(SessionRecorder, WhatTheTapsTakeComesBackFromTheFile) {
  const fs::path path = temp_file("session.mcap");
  TaskParameters task = proto::load_task_file(TETHER_TASK_DIR "/door_shared.textproto");
  {
    SessionRecorder recorder(path.string(), "test", {{"arm", "iiwa7"}, {"scene", "door"}});
    recorder.uploaded("door_shared", task);
    recorder.started(3, "door_shared");
    recorder.set_fields(4, {{"teleoperation.stall_timeout_s", "0.5"}});
    for (std::uint64_t cycle = 1; cycle <= 2000; ++cycle) {
      recorder.telemetry(telemetry(cycle));
      if (cycle % 2 == 0) {
        v1::TeleopIncrement increment;
        increment.set_sequence(cycle / 2);
        recorder.sent(increment, cycle % 4 == 0 ? DataPlane::kDatagram : DataPlane::kStream);
        v1::ForceReflection reflection;
        reflection.set_applied_sequence(cycle / 2);
        recorder.reflection(reflection);
      }
    }
    recorder.close();
    EXPECT_EQ(recorder.messages(), 2000U + 1000U + 1000U + 2U);
    EXPECT_EQ(recorder.bytes(), fs::file_size(path));
  }

  const RecordingContents contents = read_mcap_recording({path.string()});
  EXPECT_FALSE(contents.truncated);
  EXPECT_EQ(contents.site.at("recorder"), "test");
  EXPECT_EQ(contents.site.at("scene"), "door");
  ASSERT_EQ(contents.cycles.size(), 2000U);
  EXPECT_EQ(contents.messages.at(recording::kGroundIncrements), 1000U);
  EXPECT_EQ(contents.messages.at(recording::kGroundReflections), 1000U);
  const RecordedCycle& start = contents.cycles[9];
  EXPECT_EQ(start.cycle, 10U);
  EXPECT_EQ(start.inputs.submission, 3U);
  EXPECT_TRUE(start.inputs.from_rest);
  EXPECT_DOUBLE_EQ(start.inputs.teleop_velocity[3], 0.25);
  ASSERT_EQ(start.checkpoint.size, 40U);
  EXPECT_DOUBLE_EQ(start.checkpoint.values[39], 19.5);
  EXPECT_DOUBLE_EQ(start.measured_joints[6], 0.6 + 1e-2);
  ASSERT_EQ(contents.tasks.count(3), 1U);
  EXPECT_TRUE(contents.tasks.at(3).has_parameters);
  EXPECT_EQ(contents.tasks.at(3).name, "door_shared");
  // SetParameter: the site's change, applied to the set it changed.
  ASSERT_EQ(contents.tasks.count(4), 1U);
  EXPECT_FALSE(contents.tasks.at(4).restart);
  EXPECT_DOUBLE_EQ(contents.tasks.at(4).task.teleoperation.stall_timeout, 0.5);
  EXPECT_EQ(contents.tasks.at(4).task.impedance.damping, task.impedance.damping);

  // Every channel carries its schema; a message decodes with it.
  const mcap::Reader reader(path);
  std::set<std::string> schemas;
  for (const auto& [id, schema] : reader.schemas()) {
    EXPECT_EQ(schema.encoding, "protobuf");
    schemas.insert(schema.name);
  }
  EXPECT_TRUE(schemas.count("tether.v1.Telemetry"));
  EXPECT_TRUE(schemas.count("tether.v1.SentIncrement"));
  std::uint64_t exported = 0;
  EXPECT_EQ(for_each_telemetry(path.string(), [&](const TelemetrySample&) { ++exported; }), 2000U);
  EXPECT_EQ(exported, 2000U);
  fs::remove(path);
}

TEST(SessionRecorder, AFileCutShortByACrashStillReadsUpToItsLastSecond) {
  const fs::path path = temp_file("cut.mcap");
  std::uintmax_t synced = 0;
  {
    SessionRecorder recorder(path.string(), "test", {});
    for (std::uint64_t cycle = 1; cycle <= 500; ++cycle) recorder.telemetry(telemetry(cycle));
    // The writer thread flushes and fsyncs every second.
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    synced = fs::file_size(path);
    recorder.close();
  }
  // What a station killed before close() leaves: the synced prefix.
  fs::resize_file(path, synced);
  const RecordingContents contents = read_mcap_recording({path.string()});
  EXPECT_TRUE(contents.truncated);
  EXPECT_EQ(contents.cycles.size(), 500U);
  fs::remove(path);
}

TEST(SessionRecorder, AnUnwritablePathIsRefusedNamingIt) {
  try {
    SessionRecorder recorder("/nonexistent-dir/x.mcap", "test", {});
    FAIL() << "created a recording in a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.mcap"), std::string::npos) << e.what();
  }
}

TEST(RecordingFile, SaysWhichFileIsNotARecording) {
  const fs::path path = temp_file("not.mcap");
  { std::ofstream(path) << "this is not an MCAP file"; }
  try {
    read_mcap_recording({path.string()});
    FAIL() << "read a text file as a recording";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  fs::remove(path);
}

}  // namespace
}  // namespace tether::local
