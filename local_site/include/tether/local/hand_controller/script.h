#pragma once

// Scripted playback: piecewise-constant handle rates and switches from a text file.
//
// Format (one command per line, whitespace separated; '#' starts a comment):
//   units deg|rad        optional, before the first command: angular rates (wx wy wz and
//                        psi_rate) in deg/s or rad/s (default rad/s)
//   T FRAME VX VY VZ WX WY WZ PSI_RATE DEADMAN CLUTCH
//                        from T [s] on (script time, 0 at the first sample), until the next
//                        line: handle twist (v [m/s], ω) in FRAME axes — `handle` (HH) or
//                        `base` (HB) —, arm-angle rate, deadman and clutch (0 or 1)
//   T end                the script ends at T: later samples are invalid
// Times strictly increase. Before the first line nothing moves and the deadman is released;
// without an `end` line the last line holds for ever. Errors name file:line and the bad token.
// local_site/scripts/rotate_door.hcscript is an example.

#include <iosfwd>
#include <string>
#include <vector>

#include "tether/local/hand_controller/rate_device.h"

namespace tether::local {

struct ScriptSegment {
  double start = 0.0;  // [s] script time
  RateCommand command;
  bool deadman = false;
  bool clutch = false;
};

class HandScript {
 public:
  // Throws std::runtime_error "PATH: cannot open" or "PATH:LINE: ..." naming the bad token.
  static HandScript load(const std::string& path);
  // `name` stands for the file in error messages.
  static HandScript parse(std::istream& in, const std::string& name);

  // The segment in force at script time t; nullptr before the first line or after the end.
  const ScriptSegment* segment_at(double t) const noexcept;
  // The first segment start or end > t; +∞ if none.
  double next_change_after(double t) const noexcept;
  // ∫ psi_rate dt over script times [t0, t1] [rad].
  double arm_angle_change(double t0, double t1) const noexcept;
  double end_time() const { return end_time_; }  // +∞ without an `end` line
  const std::vector<ScriptSegment>& segments() const { return segments_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<ScriptSegment> segments_;
  double end_time_ = 0.0;
};

class ScriptedHandController final : public RateHandController {
 public:
  explicit ScriptedHandController(HandScript script);
  std::string describe() const override { return "script " + script_.name(); }

 protected:
  RateCommand command_at(double t) const override;
  double next_change_after(double t) const override;
  void poll(double now, DeviceSample& out) override;

 private:
  HandScript script_;
  double origin_ = 0.0;  // steady-clock time of script time 0
  bool started_ = false;
};

}  // namespace tether::local
