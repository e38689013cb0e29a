#pragma once

// Replay of a recording (`tether replay`, docs/recordings.md): runs the recorded cycles again,
// offline, through the remote site's own executor on the simulated arm, and reports how far
// the replayed run departs from the recorded one.
//
// It starts at the first task the recording saw start from rest on a simulated arm: from the
// arm's checkpoint of that cycle (the complete physics state, door angle included) and the
// executor's command before it. Every later cycle takes what the recorded one took: task
// sets, stops, resets and recoveries, the loop's missed deadlines, and the motion
// teleoperation applied (the increments themselves, their link and playout, are not needed
// again). The arm then moves on its own physics, so a replay of the simulated site lands on
// the same joints to rounding and meets the same breach in the same cycle; a departure means
// the recording is incomplete (a cycle missing: it ends there) or the site's software or
// simulation differs from this one.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tether/local/link/recording_file.h"

namespace tether::local {

struct ReplayOptions {
  std::string arm;          // empty: the recording's ("tether.site" arm)
  std::string scene;        // empty: the recording's
  double tolerance = 1e-6;  // [rad] joint departure still called the same run
};

struct ReplayedBreach {
  std::string cause;
  std::uint64_t cycle = 0;  // cycles after the replay's first
  double task_time = 0.0;   // [s]
};

struct ReplayReport {
  std::string arm, scene, task;
  std::uint64_t first_cycle = 0;   // the recorded cycle the replay starts at
  std::uint64_t cycles = 0;        // replayed
  std::string ended;               // why it ended before the recording did; empty: it did not
  double max_joint_error = 0.0;    // [rad] measured joints, replayed − recorded
  double max_command_error = 0.0;  // [rad] commanded joints
  double max_wrench_error = 0.0;   // [N] |Δf| at the MOTION origin
  double final_joint_error = 0.0;  // [rad] in the last cycle
  double max_door_error = 0.0;     // [rad] aux[0], door scene
  // The first cycle (after the replay's first) whose joints departed beyond the tolerance.
  std::optional<std::uint64_t> departed_at;
  std::optional<ReplayedBreach> recorded_breach, replayed_breach;
  bool same_breach = true;
  bool within_tolerance = true;
};

// Throws std::runtime_error when the recording holds nothing to replay (saying what it
// lacks) or names an arm or scene this build does not have.
ReplayReport replay(const RecordingContents& recording, const ReplayOptions& options);

}  // namespace tether::local
