#pragma once

// Telemetry recordings as CSV (what `tether record` writes and `tether plot` reads), one row
// per received sample, a header row naming the columns:
//
//   time_s            arm time since the first recorded sample [s]
//   arm_time_s        the remote arm's clock [s]
//   task_time_s       time since the running task started [s]
//   cycle             control cycle number
//   state             executor state: idle, running, stopping, stopped
//   task_id, task     id and name of the running (or last) task
//   aux0 … aux3       arm-specific observations; door scene: aux0 door angle [rad],
//                     aux1 its rate [rad/s], aux2 contacts; nan when the site sent fewer
//   force_n           |f| at the MOTION origin [N]
//   torque_nm         |τ| about the MOTION origin [N·m]
//   fx fy fz tx ty tz F_a, the wrench the robot applies, MOTION origin and axes [N, N·m]
//   x y z             commanded MOTION origin in BASE [m]
//   arm_angle_rad     commanded ψ [rad]
//   error0 … error6   x_c − x_r: translation [m], rotation vector [rad], arm angle [rad]
//   q1 … q7           commanded joint positions [rad], base to tip
//   measured_q1 … 7   measured joint positions [rad]
//   breach            latched breach cause ("none" while none)
//   overruns          control-loop deadline misses so far
//   compute_s         that cycle's compute time [s]
//
// Numbers are written in the shortest form that reads back to the same double.

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "tether/local/link/site_types.h"

namespace tether::local {

// The header row (without a newline).
std::string recording_header();

// Writes recording_header() and a newline, then rows as they come.
class RecordingWriter {
 public:
  explicit RecordingWriter(std::ostream& out);
  void write(const TelemetrySample& sample);
  std::size_t rows() const { return rows_; }

 private:
  std::ostream& out_;
  std::size_t rows_ = 0;
  double first_arm_time_ = 0.0;
  std::string line_;
};

// A recording read back: every numeric column by name, text columns (state, task, breach)
// as strings.
struct Recording {
  std::map<std::string, std::vector<double>> numbers;
  std::map<std::string, std::vector<std::string>> texts;
  std::size_t rows = 0;

  // Throws std::invalid_argument naming the column if it is missing.
  const std::vector<double>& column(const std::string& name) const;
  const std::vector<std::string>& text(const std::string& name) const;
};

// Throws std::runtime_error naming the file (and line) for unreadable files, a missing
// header column or a malformed number.
Recording read_recording(const std::string& path);

// Figure of a recording in the style of the door plots (deploy/door-plots.sh): the door
// angle aux0 [deg] when present, force and torque magnitude, measured joint positions, all
// against time_s; written as PNG. Throws std::runtime_error on an empty recording.
void plot_recording(const Recording& recording, const std::string& title,
                    const std::string& png_path);

}  // namespace tether::local
