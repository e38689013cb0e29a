#pragma once

// The single conversion point between tether.v1 messages and tether's domain types, used by
// both sites (task files and messages: task_io.h). Every function that can reject input
// throws ConversionError with the field path, the offending value and what is allowed;
// nothing partial is returned.

#include <stdexcept>
#include <string>

#include "tether/common/scene_description.h"
#include "tether/common/task/field_path.h"
#include "tether/common/types.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/behaviours/list.h"
#include "tether/v1/geometry.pb.h"

namespace tether::v1 {  // tether/v1/remote_site.pb.h
enum ExecutorState : int;
enum BreachCause : int;
enum Behaviour : int;
class ChannelEnergies;
class TeleoperationCounters;
class SceneDescription;
class SceneCamera;
}  // namespace tether::v1

namespace tether::proto {

// A message or file that cannot be converted. path() names the offending field in the one
// spelling of field_path.h (empty when the error is about the input as a whole, e.g. a file
// that cannot be read) and, once the reader knows it, where the value sits in its file;
// what() is path().to_string() followed by detail(), e.g.
// "door.textproto:7:5: impedance.mass.translation.x = nan: must be finite".
class ConversionError : public std::invalid_argument {
 public:
  // About no particular field: `message` is the whole text.
  explicit ConversionError(const std::string& message);
  // About `path` (a FieldPath or its spelling); `detail` follows it directly: the value and
  // what is allowed, e.g. " = nan: must be finite" or ": 6 values, the arm has 7 joints".
  ConversionError(FieldPath path, std::string detail);

  const FieldPath& path() const { return path_; }
  const std::string& detail() const { return detail_; }
  // The same error at `position` in the file it was read from (the field's position, or
  // the input's when path() is empty).
  ConversionError at(SourcePosition position) const;

 private:
  FieldPath path_;
  std::string detail_;
};

inline constexpr double kRotationTolerance = 1e-6;

// What a conversion does with NaN and infinity. What is sent to an arm (tasks, commands) must
// be finite: kReject throws naming the first such component. What a site reports it
// measured (telemetry, status, force reflection) passes through unchanged with kKeep: a
// non-finite measurement is news for the operator (it is what stops the arm with
// BreachCause::kNonFinite), not a malformed message. Neither builds a path string unless it
// throws.
enum class NonFinite { kReject, kKeep };

// `path` names the field being converted (e.g. "task.motion_frame") for messages. Units are
// those of the schema (SI, radians); motion vectors are (translation, rotation, arm angle),
// wrenches and twists (linear, angular), in whatever frame the field documents.
Vector3 to_vector3(const v1::Vector3& v, const std::string& path,
                   NonFinite policy = NonFinite::kReject);
Matrix3 to_rotation(const v1::Rotation& r, const std::string& path);
Frame to_frame(const v1::Pose& pose, const std::string& path);
Vector6 to_twist(const v1::Twist& twist, const std::string& path,
                 NonFinite policy = NonFinite::kReject);
Vector6 to_wrench(const v1::Wrench& wrench, const std::string& path,
                  NonFinite policy = NonFinite::kReject);
// Exactly kArmDof values.
JointVector to_joint_vector(const v1::JointVector& joints, const std::string& path,
                            NonFinite policy = NonFinite::kReject);
MotionVector to_motion_vector(const v1::MotionVector& m, const std::string& path,
                              NonFinite policy = NonFinite::kReject);

void from_vector3(const Vector3& v, v1::Vector3* out);
void from_frame(const Frame& frame, v1::Pose* out);  // rotation as a quaternion
// A proper rotation as a quaternion (w ≥ 0), anything else as its matrix, so that reading it
// back (to_rotation) reports the problem rather than projecting it onto SO(3).
void from_rotation(const Matrix3& R, v1::Rotation* out);
void from_twist(const Vector6& twist, v1::Twist* out);
void from_wrench(const Vector6& wrench, v1::Wrench* out);
void from_joint_vector(const JointVector& q, v1::JointVector* out);
void from_motion_vector(const MotionVector& m, v1::MotionVector* out);

// The force-reflection channel's energies (tether/common/teleop_channel.h), reported by the
// remote in telemetry and reflection and read by the ground: kept as sent, NaN included.
remote::ChannelEnergies to_channel_energies(const v1::ChannelEnergies& energies);
void from_channel_energies(const remote::ChannelEnergies& energies, v1::ChannelEnergies* out);

// The teleoperation behaviour's counters. The remote numbers increments globally across
// streams; a stream's own numbers are those less `sequence_base` (0: the global numbers).
remote::TeleoperationCounters to_teleoperation_counters(const v1::TeleoperationCounters& counters);
void from_teleoperation_counters(const remote::TeleoperationCounters& counters,
                                 std::uint64_t sequence_base, v1::TeleoperationCounters* out);

// The site's scene (tether/common/scene_description.h). Reading checks every number is
// finite, sizes positive, axes non-zero (normalised) and shapes known, naming the field.
SceneDescription to_scene(const v1::SceneDescription& scene, const std::string& path);
void from_scene(const SceneDescription& scene, v1::SceneDescription* out);
// One camera of a scene; refused (ConversionError naming the field under `path`) with an
// empty name, a field of view outside (0, 3) rad, an odd or out-of-range size, a frame rate
// outside (0, 60] Hz.
SceneCamera to_scene_camera(const v1::SceneCamera& camera, const std::string& path);
void from_scene_camera(const SceneCamera& camera, v1::SceneCamera* out);

// The shared vocabulary (tether/common/vocabulary.h, and Behaviour from the list of
// behaviours, tether/remote/behaviours/list.h) <-> its tether.v1 enums, one named pair per
// enumerator. Both sites convert through these: the remote site when it reports,
// the ground station when it reads (and in its tests, when it writes). The *_UNSPECIFIED
// wire values map to ExecutorState::kUnspecified and Behaviour::kUnspecified (BreachCause
// has BREACH_CAUSE_NONE instead). A value beyond the schema this build knows (a newer
// peer) throws ConversionError naming `path` and the value; nothing is guessed.
// ResolverKind and TeleopMode, which tasks carry too, convert in task_io.h.
ExecutorState to_executor_state(v1::ExecutorState state, const std::string& path);
v1::ExecutorState from_executor_state(ExecutorState state);
BreachCause to_breach_cause(v1::BreachCause cause, const std::string& path);
v1::BreachCause from_breach_cause(BreachCause cause);
Behaviour to_behaviour(v1::Behaviour behaviour, const std::string& path);
v1::Behaviour from_behaviour(Behaviour behaviour);

}  // namespace tether::proto
