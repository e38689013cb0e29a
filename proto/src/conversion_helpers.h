#pragma once

// Helpers shared by the conversions in this folder (not installed, not public): the task's own
// sections (task_io.cc) and each behaviour's (behaviours/<field>.cc).

#include <cmath>
#include <sstream>
#include <string>

#include "tether/common/types.h"
#include "tether/proto/convert.h"
#include "tether/remote/task/parameter_types.h"
#include "tether/v1/behaviours/input_kind.pb.h"
#include "tether/v1/geometry.pb.h"

namespace tether::proto::detail {

// Shortest faithful text of a value for error messages.
inline std::string number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

inline double finite(double v, const std::string& path) {
  if (!std::isfinite(v)) throw ConversionError(path, " = " + number(v) + ": must be finite");
  return v;
}

// ---- message -> domain ------------------------------------------------------------------

// A bound: +infinity means none (as when the field is absent); NaN is never a bound.
double limit(double v, const std::string& path);

// INPUT_KIND_UNSPECIFIED is `default_kind`, the behaviour's own default; an unknown value
// throws naming `path`.
InputKind to_input(v1::InputKind kind, InputKind default_kind, const std::string& path);

// ---- domain -> message ------------------------------------------------------------------

v1::InputKind from_input(InputKind kind);

// A proper rotation travels as a quaternion (w ≥ 0); anything else as its matrix, so that
// converting back reports the problem instead of silently projecting it onto SO(3).
void write_rotation(const Matrix3& R, v1::Rotation* out);

// The writers below take the accessor that creates the field (e.g.
// [&m] { return m()->mutable_tool_t_teleop(); }) rather than the field, so that a default
// value creates neither the field nor the message around it. Templates, to take any such
// accessor without wrapping it.

template <typename MutableRotation>
void write_rotation_if_not_identity(const Matrix3& R, MutableRotation mutable_rotation) {
  if (R != Matrix3::Identity()) write_rotation(R, mutable_rotation());
}

template <typename MutablePose>
void write_frame_if_not_identity(const Frame& f, MutablePose mutable_pose) {
  if (f.R == Matrix3::Identity() && f.p == Vector3::Zero()) return;
  v1::Pose* pose = mutable_pose();
  if (f.p != Vector3::Zero()) from_vector3(f.p, pose->mutable_position());
  if (f.R != Matrix3::Identity()) write_rotation(f.R, pose->mutable_rotation());
}

}  // namespace tether::proto::detail
