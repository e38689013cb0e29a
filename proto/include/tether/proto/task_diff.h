#pragma once

// The field-by-field difference between two task parameter sets, for operators to see what
// a set changes before it is sent (`tether do ... --diff FILE`). Both sets are compared in
// their canonical file form (from_task, task_io.h), so spelling does not count: a rotation
// given as a matrix in one and as roll-pitch-yaw in the other is the same rotation, a field
// written at its default is the same as one left out.
//
// Each difference names its field in the one spelling of field_path.h and gives both values
// in protobuf text format, as `tether set PATH VALUE` takes them; "(default)" stands for a
// field the set leaves at its domain default (task.proto: absent means default). Numbers
// equal to within 1e-10 (relative, 1e-12 absolute) count as equal, so a value computed in
// another unit (degrees to radians) does not show as a change. Rotations are compared as
// rotations (within 1e-9 per matrix entry) and shown as roll-pitch-yaw in degrees
// (geometry.proto's RollPitchYawDeg), at the path of the Rotation message.

#include <string>
#include <vector>

#include "tether/common/task/field_path.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::proto {

struct TaskDifference {
  FieldPath path;    // e.g. "spring_trajectory.destination.rotation"
  std::string from;  // text format, e.g. "rpy { roll_deg: 35 }", "0.7", "(default)"
  std::string to;
};

// The fields where `to` differs from `from`, in the order the schema declares them; lists
// of messages element by element (the elements one side lacks are "(none)"), lists of
// numbers element by element when both have the same length, else whole.
std::vector<TaskDifference> diff_tasks(const TaskParameters& from, const TaskParameters& to);

// One line per difference, "  PATH: FROM → TO", or "  (no differences)".
std::string format_differences(const std::vector<TaskDifference>& differences);

}  // namespace tether::proto
