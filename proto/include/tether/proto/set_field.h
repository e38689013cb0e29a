#pragma once

// One field of a task parameter set, by its path, from protobuf text format: what
// SetParameter does to the running task's parameters before they are converted and
// validated like any uploaded set.

#include <cstddef>
#include <string>

#include "tether/proto/convert.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {

// Longest path and value accepted [characters]: the longest path in the schema is under 80,
// and a whole section in text format (a trajectory's 64 waypoints) under 8 KiB.
inline constexpr std::size_t kMaxParameterPath = 256;
inline constexpr std::size_t kMaxParameterValue = 16384;

// Sets the field of `task` spelt `path` (FieldPath, e.g. "impedance.mass.rotation.x") from
// protobuf text format: a number, an enum name, or a message's fields ("x: 1 y: 2"). A list
// (repeated field) is set through the message that holds it. Fields that identify the task
// ("name") are refused. Throws ConversionError starting with the path as given, in the
// spelling of every other message about a task parameter; `task` may then be partly set.
void set_field(v1::TaskParameters& task, const std::string& path, const std::string& value);

}  // namespace tether::proto
