#pragma once

// The allowed values of each numeric task field, as declared once in the .proto files'
// (tether.v1.spec) options and compiled in from the table tether-task-schema writes at build
// time (proto/include/tether/proto/task_schema.h). Validation checks every number against
// its field's rule (TaskChecker::in_spec); the task reference page is written from the same
// options. Set-up code only.

#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace tether {

struct FieldRule {
  // The field as FieldPath spells it, "[]" for any element: "trajectory.waypoints[].time_s".
  std::string_view path;
  double min = -std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  double max = std::numeric_limits<double>::infinity();
  bool max_exclusive = false;
  // +infinity (a bound left out) is allowed, and disables what the field bounds.
  bool infinite_allowed = false;
  // The unit as the .proto declares it ("s", "N·m"; rows of a vector "kg | kg·m² | kg·m²").
  std::string_view unit;

  bool allows(double v) const;
  // What is allowed, as validation's messages say it, with the unit where the field has one:
  // "must be finite and > 0", "must be finite and in [0.0001, 0.1] s",
  // "must be > 0 N (leave it out for no bound)";
  // for a count (`whole`), "must be in [1, 1000]".
  std::string requirement(bool whole = false) const;
};

// Every rule, in schema order.
std::span<const FieldRule> field_rules();

// The rule of the field a value belongs to: `path` as a message prints it, perhaps with
// element indices and a component ("impedance.mass.rotation.x", "trajectory.waypoints[3].
// time_s", "joint_limit_avoidance.zone.values[2]"); indices are read as "[]" and trailing
// components are dropped until a field with a rule is found. Null when there is none.
const FieldRule* find_field_rule(std::string_view path);

}  // namespace tether
