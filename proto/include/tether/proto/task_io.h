#pragma once

// Task parameter sets as messages and files: tether.v1.TaskParameters
// (proto/tether/v1/task.proto) <-> tether::TaskParameters (common/task/task_parameters.h).
//
// File formats, chosen by extension in load_task_file():
//   .textproto, .txtpb, .pbtxt   protobuf text format (what operators write; comments with #)
//   .json                        protobuf's canonical JSON mapping (field names as in the
//                                schema or in lowerCamelCase; doubles may be "Infinity")
// An absent field takes the domain default; see task.proto.
//
// Every failure throws tether::proto::ConversionError (convert.h) whose message names the
// input (`origin`, the file name), the line and column where known, and the schema field
// path, e.g. "door.textproto:7:5: impedance.mass.translation.x = nan: must be finite". JSON
// positions come from protobuf's own error context or, for errors that only name a field,
// from locating that field in the text.
//
// Conversion checks structure (sizes, rotations, finite numbers, enum values); ranges,
// stability and behaviour combinations are checked by validate_task (common/task/
// validation.h), which needs the arm. A loaded task must be validated before it is used.

#include <string>
#include <string_view>

#include "tether/common/task/task_parameters.h"

namespace tether::v1 {
class TaskParameters;
enum TeleopMode : int;
enum ResolverKind : int;
}  // namespace tether::v1

namespace tether::proto {

class ConversionError;  // convert.h

// Message <-> domain. to_task(from_task(t)) == t for every task whose rotations are proper
// (rotations travel as quaternions, so to within 1e-15). from_task writes only fields that
// differ from the domain defaults, so files stay short; +infinity bounds are left out.
TaskParameters to_task(const v1::TaskParameters& message);
v1::TaskParameters from_task(const TaskParameters& task);

// Teleoperation modes, shared by the task schema and the teleoperation stream.
// TELEOP_MODE_UNSPECIFIED is the domain default (tool); an unknown value throws
// ConversionError naming `path`.
TeleopMode to_teleop_mode(v1::TeleopMode mode, const std::string& path);
v1::TeleopMode from_teleop_mode(TeleopMode mode);

// Resolver kinds, shared by the task schema and telemetry; RESOLVER_KIND_UNSPECIFIED is
// DLS, an unknown value throws ConversionError naming `path`.
ResolverKind to_resolver_kind(v1::ResolverKind kind, const std::string& path);
v1::ResolverKind from_resolver_kind(ResolverKind kind);

// Parses a whole task from text; `origin` names it in error messages (usually its path).
TaskParameters parse_task_text(std::string_view text, std::string_view origin);
TaskParameters parse_task_json(std::string_view text, std::string_view origin);

// Reads and parses `path`, choosing the format by extension (case-insensitive).
TaskParameters load_task_file(const std::string& path);

// Text format, as an operator would write it, with a header naming the schema.
std::string to_text(const TaskParameters& task);
// Canonical JSON (schema field names, pretty-printed).
std::string to_json(const TaskParameters& task);

}  // namespace tether::proto
