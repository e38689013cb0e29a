#pragma once

// The one spelling of a task parameter in every message about it — task-file parsing and
// conversion (tether::proto, task_io.h), validation (validation.h), SetParameter on the
// remote site and the console: its field path in the file/wire schema
// tether.v1.TaskParameters (proto/tether/v1/task.proto, geometry.proto).
//   * nested message fields are joined with dots: `bounds.max_force_n`;
//   * elements of repeated fields are indexed from 0: `trajectory.waypoints[3].time_s`;
//   * motion-space vectors (MotionVector) by component, rows 0-6 of the domain vector being
//     `translation.x`, `translation.y`, `translation.z`, `rotation.x`, `rotation.y`,
//     `rotation.z`, `arm_angle`: `impedance.mass.rotation.x`, `impedance.mass.arm_angle`;
//   * joint vectors (JointVector) by element of `values`, joints base to tip from 0:
//     `joint_limit_avoidance.zone.values[2]`;
//   * 3-vectors by `x`, `y`, `z`; wrenches (force, torque) by `force.*`, `torque.*`; twists
//     (linear, angular velocity) by `linear.*`, `angular.*`.
// A path may carry where its value was read from; to_string() then starts with that
// position, as compilers print theirs: "door.textproto:7:5: impedance.mass.rotation.x".
// Nothing here runs in the control cycle.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tether {

// Where a value was read from.
struct SourcePosition {
  std::string file;  // as the reader was given it (usually the file's path)
  int line = 0;      // 1-based; 0 when only the file is known
  int column = 0;    // 1-based, in bytes; 0 when unknown

  friend bool operator==(const SourcePosition&, const SourcePosition&) = default;
};

class FieldPath {
 public:
  struct Segment {
    std::string name;  // a field name as the schema spells it, e.g. "tool_T_motion"
    int index = -1;    // element of a repeated field, from 0; -1 for the field itself

    friend bool operator==(const Segment&, const Segment&) = default;
  };

  // The whole message: no segments (an error about the input as a whole).
  FieldPath() = default;
  // The path spelt `spelled`, e.g. "trajectory.waypoints[3].time_s". Implicit because a
  // path is interchangeable with its spelling: a literal names a field wherever a path is
  // expected. Text that parse() rejects is kept as one segment and printed as given.
  FieldPath(const char* spelled);         // NOLINT(google-explicit-constructor)
  FieldPath(const std::string& spelled);  // NOLINT(google-explicit-constructor)

  // The path spelt `text` (names [A-Za-z_][A-Za-z0-9_]*, each optionally indexed `[n]`,
  // joined with dots), or nullopt if `text` is empty or spelt otherwise.
  static std::optional<FieldPath> parse(std::string_view text);

  // Longer paths; each keeps the position. Out-of-range rows and components, and indexing
  // an empty or already indexed path, throw std::out_of_range / std::logic_error (they are
  // programming errors: the schema has no repeated repeated fields).
  FieldPath field(std::string_view name) const;  // ".name"
  FieldPath element(int index) const;            // "[index]" on the last segment
  FieldPath motion_row(int row) const;           // MotionVector, row 0-6 (see above)
  FieldPath component(int i) const;              // Vector3, 0-2: x, y, z
  FieldPath wrench_row(int i) const;             // Wrench, 0-5: force.x … torque.z
  FieldPath twist_row(int i) const;              // Twist, 0-5: linear.x … angular.z
  FieldPath joint(int i) const;                  // JointVector: values[i]

  // The same path, read from `position`.
  FieldPath at(SourcePosition position) const;
  // The same path without a position.
  FieldPath unplaced() const;

  const std::vector<Segment>& segments() const { return segments_; }
  const std::optional<SourcePosition>& position() const { return position_; }
  bool empty() const { return segments_.empty(); }

  // "file:line:column: " (or "file: " when the line is unknown) when placed, then the
  // segments, e.g. "door.textproto:7:5: trajectory.waypoints[3].time_s".
  std::string to_string() const;

  friend bool operator==(const FieldPath&, const FieldPath&) = default;

 private:
  std::vector<Segment> segments_;
  std::optional<SourcePosition> position_;
};

}  // namespace tether
