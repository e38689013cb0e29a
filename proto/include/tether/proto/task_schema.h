#pragma once

// The task schema as data: every field of tether.v1.TaskParameters, depth first in the order
// the .proto files declare them, with its (tether.v1.spec) option (field_spec.proto). Two
// things are written from it, so neither can drift from the other or from the .proto files:
//   * rules_table(): the numeric ranges as C++ rows, compiled into the control core at build
//     time (remote_site/control: tether/remote/task/schema.h), which validation checks
//     every number against;
//   * reference(): the task author's reference, docs/task-reference.md.
// Only the generated messages are needed (tether_proto_messages), not the conversions, so
// the tool that writes the table can run before the control core is built.

#include <string>
#include <vector>

#include "tether/v1/field_spec.pb.h"

namespace google::protobuf {
class FieldDescriptor;
class FileDescriptorSet;
}  // namespace google::protobuf

namespace tether::proto {

struct SchemaField {
  // The field as FieldPath spells it, with "[]" for an element of a repeated field:
  // "impedance.mass", "trajectory.waypoints[].time_s".
  std::string path;
  // Nesting depth below TaskParameters (0 for its own fields).
  int depth = 0;
  // What a task file writes there: "double", "Vector3", "enum Formulation",
  // "repeated SphereObstacle", "section" (a message whose fields follow).
  std::string type;
  // Whether the field holds numbers that validation checks against `spec` (a number, or a
  // vector of numbers: Vector3, Twist, Wrench, JointVector, MotionVector).
  bool numeric = false;
  // Whether the field is a message whose own fields are listed after it.
  bool section = false;
  bool has_spec = false;
  v1::FieldSpec spec;
  const google::protobuf::FieldDescriptor* descriptor = nullptr;
};

// Every field reachable from TaskParameters. The geometry messages (geometry.proto) are
// values, not sections: their fields are described once, as types.
std::vector<SchemaField> task_schema();

// The allowed values of a spec in words: "> 0", "[0.0001, 0.1]", "≥ 0, or left out (none)",
// "finite" (numeric, no range) or "" (not a number).
std::string allowed_text(const SchemaField& field);

// C++ rows `{"path", min, min_exclusive, max, max_exclusive, infinite_allowed, "unit"},` for every
// numeric field, the table validation compiles. Throws std::runtime_error naming each
// numeric field that has no spec.
std::string rules_table(const std::vector<SchemaField>& schema);

// The generated part of docs/task-reference.md: a table per section and one of the value
// types, with each field's comment from `comments` (protoc --include_source_info).
std::string reference(const std::vector<SchemaField>& schema,
                      const google::protobuf::FileDescriptorSet& comments);

}  // namespace tether::proto
