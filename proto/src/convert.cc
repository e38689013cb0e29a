#include "tether/proto/convert.h"

#include <cmath>
#include <utility>

#include "conversion_helpers.h"
#include "tether/common/units.h"
#include "tether/remote/behaviours/list.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::proto {

using detail::finite;
using detail::number;

ConversionError::ConversionError(const std::string& message)
    : ConversionError(FieldPath(), message) {}

ConversionError::ConversionError(FieldPath path, std::string detail)
    : std::invalid_argument(path.to_string() + detail),
      path_(std::move(path)),
      detail_(std::move(detail)) {}

ConversionError ConversionError::at(SourcePosition position) const {
  return ConversionError(path_.at(std::move(position)), detail_);
}

namespace {

// Readers without checks; the checks below run on the converted value and build field
// paths only to name a component that failed.
Vector3 read(const v1::Vector3& v) { return {v.x(), v.y(), v.z()}; }

// Throws naming the first non-finite component of `v` (if any).
void require_finite(const v1::Vector3& v, const std::string& path) {
  finite(v.x(), path + ".x");
  finite(v.y(), path + ".y");
  finite(v.z(), path + ".z");
}

[[noreturn]] void unknown_value(const std::string& path, int value, int last) {
  throw ConversionError(path, " = " + std::to_string(value) +
                                  ": unknown value (this build knows 0.." + std::to_string(last) +
                                  "; is the other site newer?)");
}

}  // namespace

Vector3 to_vector3(const v1::Vector3& v, const std::string& path, NonFinite policy) {
  Vector3 out = read(v);
  if (policy == NonFinite::kReject && !out.allFinite()) require_finite(v, path);
  return out;
}

Matrix3 to_rotation(const v1::Rotation& r, const std::string& path) {
  switch (r.representation_case()) {
    case v1::Rotation::kQuaternion: {
      const auto& q = r.quaternion();
      const std::string p = path + ".quaternion";
      const Eigen::Quaterniond quat(finite(q.w(), p + ".w"), finite(q.x(), p + ".x"),
                                    finite(q.y(), p + ".y"), finite(q.z(), p + ".z"));
      if (std::abs(quat.norm() - 1.0) > kRotationTolerance) {
        throw ConversionError(p, ": norm " + number(quat.norm()) +
                                     ", a rotation needs a unit quaternion (norm 1 ± 1e-6)");
      }
      return quat.normalized().toRotationMatrix();
    }
    case v1::Rotation::kMatrix: {
      const std::string p = path + ".matrix.rows";
      if (r.matrix().rows_size() != 9) {
        throw ConversionError(p, ": " + std::to_string(r.matrix().rows_size()) +
                                     " values, a 3x3 rotation needs 9 (row-major)");
      }
      Matrix3 R;
      for (int i = 0; i < 9; ++i) {
        R(i / 3, i % 3) = finite(r.matrix().rows(i), p + "[" + std::to_string(i) + "]");
      }
      const double orthogonality = (R * R.transpose() - Matrix3::Identity()).cwiseAbs().maxCoeff();
      const double det = R.determinant();
      if (orthogonality > kRotationTolerance || std::abs(det - 1.0) > kRotationTolerance) {
        throw ConversionError(p, ": not a rotation (max |R·Rᵀ − I| = " + number(orthogonality) +
                                     ", det = " + number(det) +
                                     "); needs an orthonormal matrix with det +1 within 1e-6");
      }
      return R;
    }
    case v1::Rotation::kRpy: {
      const std::string p = path + ".rpy";
      const double roll = finite(r.rpy().roll_deg(), p + ".roll_deg") * kDegToRad;
      const double pitch = finite(r.rpy().pitch_deg(), p + ".pitch_deg") * kDegToRad;
      const double yaw = finite(r.rpy().yaw_deg(), p + ".yaw_deg") * kDegToRad;
      return (Eigen::AngleAxisd(yaw, Vector3::UnitZ()) *
              Eigen::AngleAxisd(pitch, Vector3::UnitY()) *
              Eigen::AngleAxisd(roll, Vector3::UnitX()))
          .toRotationMatrix();
    }
    case v1::Rotation::REPRESENTATION_NOT_SET:
      return Matrix3::Identity();
  }
  return Matrix3::Identity();
}

Frame to_frame(const v1::Pose& pose, const std::string& path) {
  return Frame{to_rotation(pose.rotation(), path + ".rotation"),
               to_vector3(pose.position(), path + ".position")};
}

Vector6 to_twist(const v1::Twist& twist, const std::string& path, NonFinite policy) {
  Vector6 out;
  out << read(twist.linear()), read(twist.angular());
  if (policy == NonFinite::kReject && !out.allFinite()) {
    require_finite(twist.linear(), path + ".linear");
    require_finite(twist.angular(), path + ".angular");
  }
  return out;
}

Vector6 to_wrench(const v1::Wrench& wrench, const std::string& path, NonFinite policy) {
  Vector6 out;
  out << read(wrench.force()), read(wrench.torque());
  if (policy == NonFinite::kReject && !out.allFinite()) {
    require_finite(wrench.force(), path + ".force");
    require_finite(wrench.torque(), path + ".torque");
  }
  return out;
}

JointVector to_joint_vector(const v1::JointVector& joints, const std::string& path,
                            NonFinite policy) {
  if (joints.values_size() != kArmDof) {
    throw ConversionError(path + ".values", ": " + std::to_string(joints.values_size()) +
                                                " values, the arm has " + std::to_string(kArmDof) +
                                                " joints");
  }
  JointVector q;
  for (int i = 0; i < kArmDof; ++i) q[i] = joints.values(i);
  if (policy == NonFinite::kReject && !q.allFinite()) {
    for (int i = 0; i < kArmDof; ++i) {
      finite(joints.values(i), path + ".values[" + std::to_string(i) + "]");
    }
  }
  return q;
}

MotionVector to_motion_vector(const v1::MotionVector& m, const std::string& path,
                              NonFinite policy) {
  MotionVector out;
  out << read(m.translation()), read(m.rotation()), m.arm_angle();
  if (policy == NonFinite::kReject && !out.allFinite()) {
    require_finite(m.translation(), path + ".translation");
    require_finite(m.rotation(), path + ".rotation");
    finite(m.arm_angle(), path + ".arm_angle");
  }
  return out;
}

void from_vector3(const Vector3& v, v1::Vector3* out) {
  out->set_x(v.x());
  out->set_y(v.y());
  out->set_z(v.z());
}

void from_frame(const Frame& frame, v1::Pose* out) {
  from_vector3(frame.p, out->mutable_position());
  const Eigen::Quaterniond q(frame.R);
  auto* quat = out->mutable_rotation()->mutable_quaternion();
  quat->set_w(q.w());
  quat->set_x(q.x());
  quat->set_y(q.y());
  quat->set_z(q.z());
}

void from_twist(const Vector6& twist, v1::Twist* out) {
  from_vector3(twist.head<3>(), out->mutable_linear());
  from_vector3(twist.tail<3>(), out->mutable_angular());
}

void from_wrench(const Vector6& wrench, v1::Wrench* out) {
  from_vector3(wrench.head<3>(), out->mutable_force());
  from_vector3(wrench.tail<3>(), out->mutable_torque());
}

void from_joint_vector(const JointVector& q, v1::JointVector* out) {
  out->clear_values();
  for (int i = 0; i < kArmDof; ++i) out->add_values(q[i]);
}

void from_motion_vector(const MotionVector& m, v1::MotionVector* out) {
  from_vector3(m.head<3>(), out->mutable_translation());
  from_vector3(m.segment<3>(3), out->mutable_rotation());
  out->set_arm_angle(m[6]);
}

// Wire -> domain switches list every value of this schema and send the rest (a newer
// peer's) to unknown_value; domain -> wire switches have no default, so -Wswitch flags a
// new domain enumerator that has no wire value yet.

ExecutorState to_executor_state(v1::ExecutorState state, const std::string& path) {
  switch (state) {
    case v1::EXECUTOR_STATE_UNSPECIFIED:
      return ExecutorState::kUnspecified;
    case v1::EXECUTOR_STATE_IDLE:
      return ExecutorState::kIdle;
    case v1::EXECUTOR_STATE_RUNNING:
      return ExecutorState::kRunning;
    case v1::EXECUTOR_STATE_STOPPING:
      return ExecutorState::kStopping;
    case v1::EXECUTOR_STATE_STOPPED:
      return ExecutorState::kStopped;
    case v1::EXECUTOR_STATE_RECOVERING:
      return ExecutorState::kRecovering;
    default:
      break;
  }
  unknown_value(path, state, v1::ExecutorState_MAX);
}

v1::ExecutorState from_executor_state(ExecutorState state) {
  switch (state) {
    case ExecutorState::kUnspecified:
      return v1::EXECUTOR_STATE_UNSPECIFIED;
    case ExecutorState::kIdle:
      return v1::EXECUTOR_STATE_IDLE;
    case ExecutorState::kRunning:
      return v1::EXECUTOR_STATE_RUNNING;
    case ExecutorState::kStopping:
      return v1::EXECUTOR_STATE_STOPPING;
    case ExecutorState::kStopped:
      return v1::EXECUTOR_STATE_STOPPED;
    case ExecutorState::kRecovering:
      return v1::EXECUTOR_STATE_RECOVERING;
  }
  return v1::EXECUTOR_STATE_UNSPECIFIED;
}

BreachCause to_breach_cause(v1::BreachCause cause, const std::string& path) {
  switch (cause) {
    case v1::BREACH_CAUSE_NONE:
      return BreachCause::kNone;
    case v1::BREACH_CAUSE_TRANSLATION_DEVIATION:
      return BreachCause::kTranslationDeviation;
    case v1::BREACH_CAUSE_ROTATION_DEVIATION:
      return BreachCause::kRotationDeviation;
    case v1::BREACH_CAUSE_ARM_ANGLE_DEVIATION:
      return BreachCause::kArmAngleDeviation;
    case v1::BREACH_CAUSE_FORCE:
      return BreachCause::kForce;
    case v1::BREACH_CAUSE_TORQUE:
      return BreachCause::kTorque;
    case v1::BREACH_CAUSE_PROXIMITY_TOO_CLOSE:
      return BreachCause::kProximityTooClose;
    case v1::BREACH_CAUSE_PROXIMITY_TOO_FAR:
      return BreachCause::kProximityTooFar;
    case v1::BREACH_CAUSE_JOINT_LIMIT_MARGIN:
      return BreachCause::kJointLimitMargin;
    case v1::BREACH_CAUSE_LOOP_OVERRUN:
      return BreachCause::kLoopOverrun;
    case v1::BREACH_CAUSE_TELEOPERATION_STALLED:
      return BreachCause::kTeleoperationStalled;
    case v1::BREACH_CAUSE_ARM_FAULT:
      return BreachCause::kArmFault;
    case v1::BREACH_CAUSE_RESOLVER_SINGULAR:
      return BreachCause::kResolverSingular;
    case v1::BREACH_CAUSE_NON_FINITE:
      return BreachCause::kNonFinite;
    case v1::BREACH_CAUSE_OPERATOR_STOP:
      return BreachCause::kOperatorStop;
    case v1::BREACH_CAUSE_DEADMAN_RELEASED:
      return BreachCause::kDeadmanReleased;
    case v1::BREACH_CAUSE_GROUND_LINK_LOST:
      return BreachCause::kGroundLinkLost;
    case v1::BREACH_CAUSE_VISUAL_TARGET_LOST:
      return BreachCause::kVisualTargetLost;
    case v1::BREACH_CAUSE_INVALID_INCREMENT:
      return BreachCause::kInvalidIncrement;
    default:
      break;
  }
  unknown_value(path, cause, v1::BreachCause_MAX);
}

v1::BreachCause from_breach_cause(BreachCause cause) {
  switch (cause) {
    case BreachCause::kNone:
      return v1::BREACH_CAUSE_NONE;
    case BreachCause::kTranslationDeviation:
      return v1::BREACH_CAUSE_TRANSLATION_DEVIATION;
    case BreachCause::kRotationDeviation:
      return v1::BREACH_CAUSE_ROTATION_DEVIATION;
    case BreachCause::kArmAngleDeviation:
      return v1::BREACH_CAUSE_ARM_ANGLE_DEVIATION;
    case BreachCause::kForce:
      return v1::BREACH_CAUSE_FORCE;
    case BreachCause::kTorque:
      return v1::BREACH_CAUSE_TORQUE;
    case BreachCause::kProximityTooClose:
      return v1::BREACH_CAUSE_PROXIMITY_TOO_CLOSE;
    case BreachCause::kProximityTooFar:
      return v1::BREACH_CAUSE_PROXIMITY_TOO_FAR;
    case BreachCause::kJointLimitMargin:
      return v1::BREACH_CAUSE_JOINT_LIMIT_MARGIN;
    case BreachCause::kLoopOverrun:
      return v1::BREACH_CAUSE_LOOP_OVERRUN;
    case BreachCause::kTeleoperationStalled:
      return v1::BREACH_CAUSE_TELEOPERATION_STALLED;
    case BreachCause::kArmFault:
      return v1::BREACH_CAUSE_ARM_FAULT;
    case BreachCause::kResolverSingular:
      return v1::BREACH_CAUSE_RESOLVER_SINGULAR;
    case BreachCause::kNonFinite:
      return v1::BREACH_CAUSE_NON_FINITE;
    case BreachCause::kOperatorStop:
      return v1::BREACH_CAUSE_OPERATOR_STOP;
    case BreachCause::kDeadmanReleased:
      return v1::BREACH_CAUSE_DEADMAN_RELEASED;
    case BreachCause::kGroundLinkLost:
      return v1::BREACH_CAUSE_GROUND_LINK_LOST;
    case BreachCause::kVisualTargetLost:
      return v1::BREACH_CAUSE_VISUAL_TARGET_LOST;
    case BreachCause::kInvalidIncrement:
      return v1::BREACH_CAUSE_INVALID_INCREMENT;
  }
  return v1::BREACH_CAUSE_NONE;
}

// One case per entry of the list of behaviours (list.h), which names each one's wire value
// BEHAVIOUR_<ENUM>: an entry without one does not compile.

Behaviour to_behaviour(v1::Behaviour behaviour, const std::string& path) {
  switch (behaviour) {
    case v1::BEHAVIOUR_UNSPECIFIED:
      return Behaviour::kUnspecified;
#define TETHER_TO_BEHAVIOUR(field, Name, ENUM, label) \
  case v1::BEHAVIOUR_##ENUM:                          \
    return Behaviour::k##Name;
      TETHER_BEHAVIOURS(TETHER_TO_BEHAVIOUR)
#undef TETHER_TO_BEHAVIOUR
    default:
      break;
  }
  unknown_value(path, behaviour, v1::Behaviour_MAX);
}

v1::Behaviour from_behaviour(Behaviour behaviour) {
  switch (behaviour) {
    case Behaviour::kUnspecified:
      return v1::BEHAVIOUR_UNSPECIFIED;
#define TETHER_FROM_BEHAVIOUR(field, Name, ENUM, label) \
  case Behaviour::k##Name:                              \
    return v1::BEHAVIOUR_##ENUM;
      TETHER_BEHAVIOURS(TETHER_FROM_BEHAVIOUR)
#undef TETHER_FROM_BEHAVIOUR
  }
  return v1::BEHAVIOUR_UNSPECIFIED;
}

namespace {

PortEnergies to_port_energies(const v1::PortEnergies& e) {
  PortEnergies out;
  out.in = e.in_j();
  out.out = e.out_j();
  out.observed = e.observed_j();
  out.dissipated = e.dissipated_j();
  return out;
}

void from_port_energies(const PortEnergies& e, v1::PortEnergies* out) {
  out->set_in_j(e.in);
  out->set_out_j(e.out);
  out->set_observed_j(e.observed);
  out->set_dissipated_j(e.dissipated);
}

}  // namespace

remote::ChannelEnergies to_channel_energies(const v1::ChannelEnergies& energies) {
  return remote::ChannelEnergies{to_port_energies(energies.master()),
                                 to_port_energies(energies.slave())};
}

void from_channel_energies(const remote::ChannelEnergies& energies, v1::ChannelEnergies* out) {
  from_port_energies(energies.master, out->mutable_master());
  from_port_energies(energies.slave, out->mutable_slave());
}

remote::TeleoperationCounters to_teleoperation_counters(const v1::TeleoperationCounters& counters) {
  remote::TeleoperationCounters out;
  out.applied = counters.applied();
  out.lost = counters.lost();
  out.duplicates = counters.duplicates();
  out.last_sequence = counters.last_sequence();
  out.discarded = counters.discarded();
  out.stale = counters.stale();
  out.enabled = counters.enabled();
  out.ended = counters.ended();
  out.awaiting_release = counters.awaiting_release();
  out.concealed = counters.concealed();
  switch (counters.plane()) {
    case v1::DATA_PLANE_STREAM:
      out.plane = DataPlane::kStream;
      break;
    case v1::DATA_PLANE_DATAGRAM:
      out.plane = DataPlane::kDatagram;
      break;
    default:
      out.plane = DataPlane::kNone;
      break;
  }
  out.stall_bound = counters.stall_bound_s();
  out.playout_delay = counters.playout_delay_s();
  return out;
}

void from_teleoperation_counters(const remote::TeleoperationCounters& counters,
                                 std::uint64_t sequence_base, v1::TeleoperationCounters* out) {
  out->set_applied(counters.applied);
  out->set_lost(counters.lost);
  out->set_duplicates(counters.duplicates);
  out->set_last_sequence(
      counters.last_sequence > sequence_base ? counters.last_sequence - sequence_base : 0);
  out->set_discarded(counters.discarded);
  out->set_stale(counters.stale);
  out->set_enabled(counters.enabled);
  out->set_ended(counters.ended);
  out->set_awaiting_release(counters.awaiting_release);
  out->set_concealed(counters.concealed);
  switch (counters.plane) {
    case DataPlane::kNone:
      out->set_plane(v1::DATA_PLANE_UNSPECIFIED);
      break;
    case DataPlane::kStream:
      out->set_plane(v1::DATA_PLANE_STREAM);
      break;
    case DataPlane::kDatagram:
      out->set_plane(v1::DATA_PLANE_DATAGRAM);
      break;
  }
  out->set_stall_bound_s(counters.stall_bound);
  out->set_playout_delay_s(counters.playout_delay);
}

SceneCamera to_scene_camera(const v1::SceneCamera& c, const std::string& at) {
  SceneCamera camera;
  camera.name = c.name();
  if (camera.name.empty()) throw ConversionError(at + ".name", ": must not be empty");
  camera.mount = c.mount();
  camera.pose = to_frame(c.pose(), at + ".pose");
  if (!(c.field_of_view() > 0.0 && c.field_of_view() < 3.0)) {
    throw ConversionError(at + ".field_of_view",
                          " = " + std::to_string(c.field_of_view()) + ": must be in (0, 3) rad");
  }
  const auto pixels = [&](int v, const char* field) {
    if (v < 16 || v > 4096 || v % 2 != 0) {
      throw ConversionError(at + "." + field,
                            " = " + std::to_string(v) + ": must be even and in [16, 4096] px");
    }
    return v;
  };
  camera.field_of_view = c.field_of_view();
  camera.width = pixels(c.width(), "width");
  camera.height = pixels(c.height(), "height");
  if (!(c.frame_rate() > 0.0 && c.frame_rate() <= 60.0)) {
    throw ConversionError(at + ".frame_rate",
                          " = " + std::to_string(c.frame_rate()) + ": must be in (0, 60] Hz");
  }
  camera.frame_rate = c.frame_rate();
  camera.stereo_partner = c.stereo_partner();
  return camera;
}

void from_scene_camera(const SceneCamera& camera, v1::SceneCamera* c) {
  c->set_name(camera.name);
  c->set_mount(camera.mount);
  from_frame(camera.pose, c->mutable_pose());
  c->set_field_of_view(camera.field_of_view);
  c->set_width(camera.width);
  c->set_height(camera.height);
  c->set_frame_rate(camera.frame_rate);
  c->set_stereo_partner(camera.stereo_partner);
}

SceneDescription to_scene(const v1::SceneDescription& scene, const std::string& path) {
  SceneDescription out;
  out.name = scene.name();
  for (int i = 0; i < scene.bodies_size(); ++i) {
    const v1::SceneBody& b = scene.bodies(i);
    const std::string at = path + ".bodies[" + std::to_string(i) + "]";
    SceneBody body;
    body.name = b.name();
    switch (b.shape()) {
      case v1::SceneBody::SHAPE_BOX:
        body.shape = SceneBody::Shape::kBox;
        break;
      case v1::SceneBody::SHAPE_SPHERE:
        body.shape = SceneBody::Shape::kSphere;
        break;
      case v1::SceneBody::SHAPE_CYLINDER:
        body.shape = SceneBody::Shape::kCylinder;
        break;
      default:
        throw ConversionError(at + ".shape", " = " + std::to_string(b.shape()) +
                                                 ": must be SHAPE_BOX, SHAPE_SPHERE or "
                                                 "SHAPE_CYLINDER");
    }
    body.size = to_vector3(b.size(), at + ".size");
    if (body.size.x() <= 0.0 ||
        (body.shape == SceneBody::Shape::kBox && body.size.minCoeff() <= 0.0) ||
        (body.shape == SceneBody::Shape::kCylinder && body.size.z() <= 0.0)) {
      throw ConversionError(at + ".size", ": the shape's sizes must be > 0");
    }
    body.pose = to_frame(b.pose(), at + ".pose");
    body.joint = b.joint();
    body.obstacle = b.obstacle();
    body.contact = b.contact();
    if (b.has_tag()) {
      if (b.tag().id() < 0 || b.tag().id() >= kTag36h11Count) {
        throw ConversionError(at + ".tag.id",
                              " = " + std::to_string(b.tag().id()) + ": must be in [0, " +
                                  std::to_string(kTag36h11Count - 1) + "] (tag36h11)");
      }
      if (!(b.tag().size() > 0.0 && b.tag().size() <= 2.0)) {
        throw ConversionError(at + ".tag.size",
                              " = " + number(b.tag().size()) + ": must be in (0, 2] m");
      }
      body.tag = SceneTag{b.tag().id(), b.tag().size()};
    }
    out.bodies.push_back(std::move(body));
  }
  for (int i = 0; i < scene.joints_size(); ++i) {
    const v1::SceneJoint& j = scene.joints(i);
    const std::string at = path + ".joints[" + std::to_string(i) + "]";
    SceneJoint joint;
    joint.name = j.name();
    joint.position = to_vector3(j.position(), at + ".position");
    joint.axis = to_vector3(j.axis(), at + ".axis");
    // stableNorm: the plain norm of finite components near 1e200 overflows to infinity.
    const double length = joint.axis.stableNorm();
    if (!(length > 1e-9) || !std::isfinite(length)) {
      throw ConversionError(at + ".axis", ": must be a finite, non-zero direction");
    }
    joint.axis /= length;
    if (!std::isfinite(j.lower()) || !std::isfinite(j.upper()) || j.lower() > j.upper()) {
      throw ConversionError(at + ".lower", " = " + std::to_string(j.lower()) +
                                               ": must be finite and <= upper (" +
                                               std::to_string(j.upper()) + ")");
    }
    joint.lower = j.lower();
    joint.upper = j.upper();
    joint.aux_index = j.aux_index();
    out.joints.push_back(std::move(joint));
  }
  for (int i = 0; i < scene.cameras_size(); ++i) {
    out.cameras.push_back(
        to_scene_camera(scene.cameras(i), path + ".cameras[" + std::to_string(i) + "]"));
  }
  return out;
}

void from_scene(const SceneDescription& scene, v1::SceneDescription* out) {
  out->set_name(scene.name);
  for (const SceneBody& body : scene.bodies) {
    v1::SceneBody* b = out->add_bodies();
    b->set_name(body.name);
    switch (body.shape) {
      case SceneBody::Shape::kBox:
        b->set_shape(v1::SceneBody::SHAPE_BOX);
        break;
      case SceneBody::Shape::kSphere:
        b->set_shape(v1::SceneBody::SHAPE_SPHERE);
        break;
      case SceneBody::Shape::kCylinder:
        b->set_shape(v1::SceneBody::SHAPE_CYLINDER);
        break;
    }
    from_vector3(body.size, b->mutable_size());
    from_frame(body.pose, b->mutable_pose());
    b->set_joint(body.joint);
    b->set_obstacle(body.obstacle);
    b->set_contact(body.contact);
    if (body.tag) {
      b->mutable_tag()->set_id(body.tag->id);
      b->mutable_tag()->set_size(body.tag->size);
    }
  }
  for (const SceneJoint& joint : scene.joints) {
    v1::SceneJoint* j = out->add_joints();
    j->set_name(joint.name);
    from_vector3(joint.position, j->mutable_position());
    from_vector3(joint.axis, j->mutable_axis());
    j->set_lower(joint.lower);
    j->set_upper(joint.upper);
    j->set_aux_index(joint.aux_index);
  }
  for (const SceneCamera& camera : scene.cameras) from_scene_camera(camera, out->add_cameras());
}

}  // namespace tether::proto
