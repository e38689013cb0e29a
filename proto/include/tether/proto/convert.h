#pragma once

// The single conversion point between tether.v1 messages and tether's domain types.
// Every function that can reject input throws ConversionError with the field path, the
// offending value and what is allowed; nothing partial is returned.

#include <stdexcept>
#include <string>

#include "tether/common/types.h"
#include "tether/v1/geometry.pb.h"

namespace tether::proto {

class ConversionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

inline constexpr double kRotationTolerance = 1e-6;

// `path` names the field being converted (e.g. "task.motion_frame") for messages.
Vector3 to_vector3(const v1::Vector3& v, const std::string& path);
Matrix3 to_rotation(const v1::Rotation& r, const std::string& path);
Frame to_frame(const v1::Pose& pose, const std::string& path);
Vector6 to_twist(const v1::Twist& twist, const std::string& path);
Vector6 to_wrench(const v1::Wrench& wrench, const std::string& path);
JointVector to_joint_vector(const v1::JointVector& joints, const std::string& path);
MotionVector to_motion_vector(const v1::MotionVector& m, const std::string& path);

void from_vector3(const Vector3& v, v1::Vector3* out);
void from_frame(const Frame& frame, v1::Pose* out);  // rotation as a quaternion
void from_twist(const Vector6& twist, v1::Twist* out);
void from_wrench(const Vector6& wrench, v1::Wrench* out);
void from_joint_vector(const JointVector& q, v1::JointVector* out);
void from_motion_vector(const MotionVector& m, v1::MotionVector* out);

}  // namespace tether::proto
