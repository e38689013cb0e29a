#pragma once

// Reading tether's MCAP recordings (docs/recordings.md) back into domain types: the link's
// edge for files, as wire.h is for calls. Files from every writer read the same way: the
// remote's black-box segments, a ground session (tether-ground --record) and `tether record`.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tether/local/link/site_types.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local {

// One control cycle as recorded, with what `tether replay` needs to run it again.
struct RecordedCycle {
  // Which run of the site it is from ("tether.site" metadata "run": when the site started);
  // cycle numbers start again with each.
  std::size_t run = 0;
  std::uint64_t cycle = 0;
  std::int64_t unix_ns = 0;  // when the cycle sampled the arm
  double arm_time = 0.0;     // [s]
  double task_time = 0.0;    // [s]
  ExecutorState state = ExecutorState::kUnspecified;
  std::uint64_t task_id = 0;
  JointVector measured_joints = JointVector::Zero();   // [rad]
  JointVector commanded_joints = JointVector::Zero();  // [rad]
  Vector6 wrench = Vector6::Zero();                    // F_a, MOTION origin and axes [N, N·m]
  std::array<double, 4> aux{};
  Breach breach;
  std::uint64_t dropped_samples = 0;  // the stream's drops so far (a gap if it grew)
  remote::CycleInputs inputs;
  remote::ArmCheckpoint checkpoint;
};

struct RecordedTaskSet {
  std::string name;
  bool restart = true;
  bool has_parameters = false;  // false: the file names the task but lacks its set
  TaskParameters task;
};

struct RecordingContents {
  std::vector<std::string> files;
  std::map<std::string, std::string> site;         // the "tether.site" metadata of the first file
  std::vector<RecordedCycle> cycles;               // by run, then cycle number, each once
  std::map<std::uint64_t, RecordedTaskSet> tasks;  // by the executor's id
  std::map<std::string, std::uint64_t> messages;   // per topic
  bool truncated = false;  // a file without its footer (a writer killed): recovered
};

// Reads `paths` (files, or directories whose *.mcap files are all read, by name): every
// cycle of /tether/telemetry and every task set of /tether/tasks; other topics are counted.
// Throws std::runtime_error naming the file and what is wrong with it.
RecordingContents read_mcap_recording(const std::vector<std::string>& paths);

// Every /tether/telemetry message of `path` in order, as the console's telemetry sample
// (for `tether export --csv`). Returns the number of samples.
std::uint64_t for_each_telemetry(const std::string& path,
                                 const std::function<void(const TelemetrySample&)>& f);

}  // namespace tether::local
