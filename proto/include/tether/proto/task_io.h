#pragma once

// Task parameter sets as messages and files: tether.v1.TaskParameters
// (proto/tether/v1/task.proto) <-> tether::TaskParameters (remote/task/task_parameters.h).
//
// File formats, chosen by extension in load_task_file():
//   .textproto, .txtpb, .pbtxt   protobuf text format (what operators write; comments with #)
//   .json                        protobuf's canonical JSON mapping (field names as in the
//                                schema or in lowerCamelCase; doubles may be "Infinity")
// An absent field takes the domain default; see task.proto.
//
// Every failure throws tether::proto::ConversionError (convert.h) carrying the field path
// (FieldPath, common/task/field_path.h: the one spelling of a task parameter) placed in the
// input (`origin`, the file name) at the field's line and column where the input gives it:
// "door.textproto:7:5: impedance.mass.translation.x = nan: must be finite". Text-format
// positions are those protobuf's parser records for each field it reads; JSON ones are found
// by following the path through the text (protobuf 3.21's JSON parser records none). Errors
// of the parsers themselves have no field path, only the spot they report (the text parser
// reports an unknown field or enum name, or a mistyped value, at the token after it; the
// error is moved back to the name its message quotes).
//
// Conversion checks structure (sizes, rotations, finite numbers, enum values); ranges,
// stability and behaviour combinations are checked by validate_task (remote/task/
// validation.h), which needs the arm. A loaded task must be validated before it is used:
// load_valid_task_file does both and places every validation issue in the file as well.

#include <string>
#include <string_view>

#include "tether/remote/task/task_parameters.h"

namespace tether {
class KinematicModel;
}  // namespace tether

namespace tether::v1 {
class TaskParameters;
enum TeleopMode : int;
enum ReflectionMethod : int;
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
ReflectionMethod to_reflection_method(v1::ReflectionMethod method, const std::string& path);
v1::ReflectionMethod from_reflection_method(ReflectionMethod method);

// Resolver kinds, shared by the task schema and telemetry; RESOLVER_KIND_UNSPECIFIED is
// DLS, an unknown value throws ConversionError naming `path`.
ResolverKind to_resolver_kind(v1::ResolverKind kind, const std::string& path);
v1::ResolverKind from_resolver_kind(ResolverKind kind);

// Parses a whole task from text; `origin` names it in error messages (usually its path).
TaskParameters parse_task_text(std::string_view text, std::string_view origin);
TaskParameters parse_task_json(std::string_view text, std::string_view origin);

// Reads and parses `path`, choosing the format by extension (case-insensitive).
TaskParameters load_task_file(const std::string& path);
// load_task_file, then validate_task for `model`: an invalid task throws
// TaskValidationError (validation.h) whose issues are placed at their fields in `path`
// ("door.textproto:7:5: impedance.mass.rotation.x = -2: must be finite and > 0"); a field
// the file leaves out is placed at the innermost message the file gives around it, or at
// the file.
TaskParameters load_valid_task_file(const std::string& path, const KinematicModel& model);

// Text format, as an operator would write it, with a header naming the schema.
std::string to_text(const TaskParameters& task);
// Canonical JSON (schema field names, pretty-printed).
std::string to_json(const TaskParameters& task);

}  // namespace tether::proto
