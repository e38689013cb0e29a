#include "tether/local/link/recording_file.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "tether/mcap/reader.h"
#include "tether/proto/convert.h"
#include "tether/proto/recording_topics.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.pb.h"
#include "wire.h"

namespace tether::local {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    if (fs::is_directory(path)) {
      std::vector<std::string> in_dir;
      for (const fs::directory_entry& e : fs::directory_iterator(path)) {
        if (e.is_regular_file() && e.path().extension() == ".mcap") {
          in_dir.push_back(e.path().string());
        }
      }
      if (in_dir.empty()) throw std::runtime_error(path + ": no .mcap files in this directory");
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(path);
    }
  }
  return files;
}

remote::CycleInputs to_inputs(const v1::CycleInputs& in) {
  remote::CycleInputs out;
  out.submission = in.submission();
  out.restart = in.restart();
  out.from_rest = in.from_rest();
  out.stop = in.stop() == v1::BREACH_CAUSE_NONE ? BreachCause::kNone
                                                : proto::to_breach_cause(in.stop(), "inputs.stop");
  out.reset = in.reset();
  out.recovery = in.recovery();
  out.recovery_request.kind =
      in.recovery_jog() ? remote::RecoveryKind::kJointJog : remote::RecoveryKind::kRetreat;
  out.recovery_request.joint = in.recovery_joint();
  out.recovery_request.distance = in.recovery_distance();
  out.recovery_request.speed = in.recovery_speed();
  out.consecutive_overruns = in.consecutive_overruns();
  if (in.has_teleop_velocity()) {
    out.teleop_velocity = proto::to_motion_vector(in.teleop_velocity(), "inputs.teleop_velocity",
                                                  proto::NonFinite::kKeep);
  }
  out.teleop_enabled = in.teleop_enabled();
  out.teleop_stalled = in.teleop_stalled();
  if (in.has_prior_command()) {
    out.prior_command =
        proto::to_joint_vector(in.prior_command(), "inputs.prior_command", proto::NonFinite::kKeep);
  }
  return out;
}

RecordedCycle to_cycle(const v1::Telemetry& t) {
  RecordedCycle c;
  c.cycle = t.cycle();
  c.unix_ns = t.timing().sample_unix_ns();
  c.arm_time = t.arm_time_s();
  c.task_time = t.task_time_s();
  c.state = proto::to_executor_state(t.state(), "state");
  c.task_id = t.task_id();
  c.measured_joints =
      proto::to_joint_vector(t.measured_joints(), "measured_joints", proto::NonFinite::kKeep);
  c.commanded_joints =
      proto::to_joint_vector(t.commanded_joints(), "commanded_joints", proto::NonFinite::kKeep);
  c.wrench = proto::to_wrench(t.wrench(), "wrench", proto::NonFinite::kKeep);
  for (int i = 0; i < std::min<int>(t.aux_size(), 4); ++i) {
    c.aux[static_cast<std::size_t>(i)] = t.aux(i);
  }
  c.breach = wire::to_domain(t.breach());
  c.dropped_samples = t.dropped_samples();
  c.inputs = to_inputs(t.inputs());
  if (t.arm_checkpoint_size() > static_cast<int>(remote::kMaxArmCheckpoint)) {
    throw std::runtime_error("cycle " + std::to_string(c.cycle) + ": arm_checkpoint of " +
                             std::to_string(t.arm_checkpoint_size()) + " values: at most " +
                             std::to_string(remote::kMaxArmCheckpoint));
  }
  c.checkpoint.size = static_cast<std::uint32_t>(t.arm_checkpoint_size());
  for (int i = 0; i < t.arm_checkpoint_size(); ++i) {
    c.checkpoint.values[static_cast<std::size_t>(i)] = t.arm_checkpoint(i);
  }
  return c;
}

}  // namespace

RecordingContents read_mcap_recording(const std::vector<std::string>& paths) {
  RecordingContents contents;
  contents.files = expand(paths);
  std::map<std::pair<std::size_t, std::uint64_t>, RecordedCycle> cycles;
  std::vector<std::string> runs;  // in the order the files show them
  for (const std::string& file : contents.files) {
    const mcap::Reader reader{fs::path(file)};
    contents.truncated = contents.truncated || reader.truncated();
    std::string run;
    for (const auto& [name, values] : reader.metadata()) {
      if (name != recording::kSiteMetadata) continue;
      if (contents.site.empty()) contents.site = values;
      if (const auto found = values.find("run"); found != values.end()) run = found->second;
    }
    auto known = std::find(runs.begin(), runs.end(), run);
    if (known == runs.end()) known = runs.insert(runs.end(), run);
    const auto run_index = static_cast<std::size_t>(known - runs.begin());
    reader.for_each_message([&](const mcap::Channel& channel, const mcap::Message& message) {
      ++contents.messages[channel.topic];
      const auto bad = [&](const char* type) {
        return std::runtime_error(file + ": a " + channel.topic + " message at log time " +
                                  std::to_string(message.log_time) + " is not a " + type);
      };
      if (channel.topic == recording::kTelemetry) {
        v1::Telemetry t;
        if (!t.ParseFromArray(message.data.data(), static_cast<int>(message.data.size()))) {
          throw bad("tether.v1.Telemetry");
        }
        try {
          RecordedCycle c = to_cycle(t);
          c.run = run_index;
          cycles.emplace(std::make_pair(run_index, c.cycle), std::move(c));
        } catch (const std::exception& e) {
          throw std::runtime_error(file + ": " + channel.topic + ": " + e.what());
        }
      } else if (channel.topic == recording::kTasks) {
        v1::RecordedTask r;
        if (!r.ParseFromArray(message.data.data(), static_cast<int>(message.data.size()))) {
          throw bad("tether.v1.RecordedTask");
        }
        RecordedTaskSet set;
        set.name = r.name();
        set.restart = r.restart();
        if (r.has_task()) {
          try {
            set.task = proto::to_task(r.task());
            set.has_parameters = true;
          } catch (const std::exception& e) {
            throw std::runtime_error(file + ": task #" + std::to_string(r.id()) + ": " + e.what());
          }
        }
        contents.tasks[r.id()] = std::move(set);
      }
    });
  }
  contents.cycles.reserve(cycles.size());
  for (auto& [number, cycle] : cycles) contents.cycles.push_back(std::move(cycle));
  return contents;
}

std::uint64_t for_each_telemetry(const std::string& path,
                                 const std::function<void(const TelemetrySample&)>& f) {
  const mcap::Reader reader{fs::path(path)};
  std::uint64_t n = 0;
  reader.for_each_message([&](const mcap::Channel& channel, const mcap::Message& message) {
    if (channel.topic != recording::kTelemetry) return;
    v1::Telemetry t;
    if (!t.ParseFromArray(message.data.data(), static_cast<int>(message.data.size()))) {
      throw std::runtime_error(path + ": a " + channel.topic + " message at log time " +
                               std::to_string(message.log_time) + " is not a tether.v1.Telemetry");
    }
    f(wire::to_domain(t));
    ++n;
  });
  return n;
}

}  // namespace tether::local
