#include "tether/local/console/recording.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "tether/common/units.h"
#include "tether/remote/report/plot.h"

namespace tether::local {
namespace {

constexpr int kAuxColumns = 4;
const char* const kTextColumns[] = {"state", "task", "breach", "resolver"};

bool is_text_column(const std::string& name) {
  for (const char* t : kTextColumns) {
    if (name == t) return true;
  }
  return false;
}

void append(std::string& line, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  line += ',';
  line.append(buffer, result.ptr);
}

void append(std::string& line, std::uint64_t value) { append(line, static_cast<double>(value)); }

// Names on the wire are [A-Za-z0-9_.-], but a comma would shift every later column.
void append_text(std::string& line, const std::string& text) {
  line += ',';
  for (char c : text) line += (c == ',' || c == '\n' || c == '\r') ? ';' : c;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

}  // namespace

std::string recording_header() {
  std::string h = "time_s,arm_time_s,task_time_s,cycle,state,task_id,task";
  // Appended piecewise: `"literal" + std::string` trips GCC 12's -Wrestrict false positive.
  auto numbered = [&h](const char* stem, int from, int count) {
    for (int i = from; i < from + count; ++i) {
      h += ',';
      h += stem;
      h += std::to_string(i);
    }
  };
  numbered("aux", 0, kAuxColumns);
  h += ",force_n,torque_nm,fx,fy,fz,tx,ty,tz,x,y,z,arm_angle_rad";
  numbered("error", 0, kMotionDim);
  numbered("q", 1, kArmDof);
  numbered("measured_q", 1, kArmDof);
  h += ",breach,overruns,compute_s,resolver,p,obstacle_clearance_m";
  return h;
}

RecordingWriter::RecordingWriter(std::ostream& out) : out_(out) {
  out_ << recording_header() << '\n';
}

void RecordingWriter::write(const TelemetrySample& s) {
  if (rows_ == 0) first_arm_time_ = s.arm_time;
  line_.clear();
  char buffer[32];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, s.arm_time - first_arm_time_);
  line_.append(buffer, r.ptr);
  append(line_, s.arm_time);
  append(line_, s.task_time);
  append(line_, s.cycle);
  append_text(line_, to_string(s.state));
  append(line_, s.task_id);
  append_text(line_, s.task_name);
  for (int i = 0; i < kAuxColumns; ++i) {
    append(line_, static_cast<std::size_t>(i) < s.aux.size() ? s.aux[static_cast<std::size_t>(i)]
                                                             : std::nan(""));
  }
  append(line_, s.wrench.head<3>().norm());
  append(line_, s.wrench.tail<3>().norm());
  for (int i = 0; i < 6; ++i) append(line_, s.wrench[i]);
  for (int i = 0; i < 3; ++i) append(line_, s.motion_position[i]);
  append(line_, s.arm_angle);
  for (int i = 0; i < kMotionDim; ++i) append(line_, s.error[i]);
  for (int i = 0; i < kArmDof; ++i) append(line_, s.commanded_joints[i]);
  for (int i = 0; i < kArmDof; ++i) append(line_, s.measured_joints[i]);
  append_text(line_, to_string(s.breach.cause));
  append(line_, s.timing.overruns);
  append(line_, s.timing.compute_time);
  append_text(line_, to_string(s.resolver.kind));
  append(line_, s.resolver.achieved_fraction);
  append(line_, s.resolver.obstacle_clearance);
  line_ += '\n';
  out_ << line_;
  ++rows_;
}

const std::vector<double>& Recording::column(const std::string& name) const {
  const auto it = numbers.find(name);
  if (it == numbers.end()) throw std::invalid_argument("recording has no column '" + name + "'");
  return it->second;
}

const std::vector<std::string>& Recording::text(const std::string& name) const {
  const auto it = texts.find(name);
  if (it == texts.end()) throw std::invalid_argument("recording has no column '" + name + "'");
  return it->second;
}

Recording read_recording(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the recording");
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty file, no header row");
  const std::vector<std::string> header = split(line);
  for (const char* required : {"time_s", "aux0", "force_n", "torque_nm", "measured_q1"}) {
    bool found = false;
    for (const auto& h : header) found = found || h == required;
    if (!found) {
      throw std::runtime_error(path + ":1: no column '" + required +
                               "' (not a recording written by `tether record`?)");
    }
  }
  Recording rec;
  for (const auto& name : header) {
    if (is_text_column(name))
      rec.texts[name];
    else
      rec.numbers[name];
  }
  std::size_t line_number = 1;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    const std::vector<std::string> fields = split(line);
    if (fields.size() != header.size()) {
      throw std::runtime_error(path + ":" + std::to_string(line_number) + ": " +
                               std::to_string(fields.size()) + " fields, the header has " +
                               std::to_string(header.size()));
    }
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (is_text_column(header[i])) {
        rec.texts[header[i]].push_back(fields[i]);
        continue;
      }
      // strtod rather than from_chars: it also reads the "nan" of absent aux values.
      char* end = nullptr;
      const double value = std::strtod(fields[i].c_str(), &end);
      if (fields[i].empty() || end != fields[i].c_str() + fields[i].size()) {
        throw std::runtime_error(path + ":" + std::to_string(line_number) + ": column " +
                                 header[i] + " = '" + fields[i] + "' is not a number");
      }
      rec.numbers[header[i]].push_back(value);
    }
    ++rec.rows;
  }
  return rec;
}

void plot_recording(const Recording& recording, const std::string& title,
                    const std::string& png_path) {
  if (recording.rows == 0) throw std::runtime_error("the recording has no samples to plot");
  const std::vector<double>& time = recording.column("time_s");
  namespace report = remote::report;
  report::Figure figure;
  figure.title = title;

  const std::vector<double>& aux0 = recording.column("aux0");
  bool has_aux0 = false;
  for (double a : aux0) has_aux0 = has_aux0 || std::isfinite(a);
  if (has_aux0) {
    std::vector<double> degrees(aux0.size());
    for (std::size_t k = 0; k < degrees.size(); ++k) degrees[k] = aux0[k] * kRadToDeg;
    report::Panel angle;
    angle.title = "door angle (aux0)";
    angle.x_label = "time [s]";
    angle.y_label = "angle [deg]";
    angle.series.push_back({"door angle", time, degrees, report::Rgb{31, 119, 180}});
    figure.panels.push_back(angle);
  }

  report::Panel wrench;
  wrench.title = "force and torque magnitude at the MOTION origin";
  wrench.x_label = "time [s]";
  wrench.y_label = "|f| [N], |tau| [N m]";
  wrench.series.push_back(
      {"force [N]", time, recording.column("force_n"), report::Rgb{214, 39, 40}});
  wrench.series.push_back(
      {"torque [N m]", time, recording.column("torque_nm"), report::Rgb{44, 160, 44}});
  figure.panels.push_back(wrench);

  report::Panel joints;
  joints.title = "measured joint positions";
  joints.x_label = "time [s]";
  joints.y_label = "q [rad]";
  for (int i = 1; i <= kArmDof; ++i) {
    const std::string index = std::to_string(i);
    std::string label = "q";
    label += index;
    joints.series.push_back({label, time, recording.column("measured_" + label),
                             report::palette_color(static_cast<std::size_t>(i - 1))});
  }
  figure.panels.push_back(joints);
  report::write_png(figure, png_path);
}

}  // namespace tether::local
