#pragma once

// Kinematics of a 7-DOF serial revolute arm, split pinocchio-style into an immutable
// model (built once from an ArmModel, may throw) and a state that forward_kinematics()
// fills in place. Nothing here allocates after construction, nothing throws on the
// control path.
//
// Frames: everything is expressed in the arm's BASE frame (the URDF base link) unless a
// name says otherwise. Joint frames are the URDF joint frames.

#include <array>

#include "tether/common/arm_model.h"
#include "tether/common/types.h"

namespace tether {

class KinematicModel {
 public:
  // Throws ArmModelError if the arm is not a 7-DOF revolute chain or lacks S/E/W points.
  explicit KinematicModel(const ArmModel& arm);

  const JointVector& lower_limits() const { return lower_; }
  const JointVector& upper_limits() const { return upper_; }
  const JointVector& velocity_limits() const { return velocity_; }
  const JointVector& acceleration_limits() const { return acceleration_; }
  const ArmModel& arm() const { return arm_; }
  // Shoulder, elbow, wrist (in that order): index of the joint that carries each point.
  int point_joint(int which) const { return points_[static_cast<std::size_t>(which)].joint; }

 private:
  friend class KinematicState;
  friend void forward_kinematics(const KinematicModel&, const Eigen::Ref<const JointVector>&,
                                 class KinematicState&);

  // Every joint is re-expressed in an "aligned" frame whose z axis is its rotation axis,
  // so a joint rotation is a plane rotation of two columns. align_[i] maps aligned-frame
  // coordinates to URDF joint-frame coordinates.
  std::array<Frame, kArmDof> step_;  // aligned frame i-1 (base for i=0) -> aligned frame i
  // Most arms (every DH-style chain, both shipped arms) have steps whose rotation is a
  // signed permutation: column j of R_prev·step.R is then sign[j]·R_prev.col(perm[j]) and
  // forward kinematics skips the 3×3 product (pinocchio's RevoluteX/Y/Z specialisation).
  struct Permutation {
    bool valid = false;
    std::array<int, 3> column{0, 1, 2};
    std::array<double, 3> sign{1.0, 1.0, 1.0};
  };
  std::array<Permutation, kArmDof> permutation_;
  std::array<Matrix3, kArmDof> align_;
  Frame tool_;                      // aligned frame 6 -> tool frame
  std::array<ArmPoint, 3> points_;  // shoulder, elbow, wrist; offsets in aligned frames
  JointVector lower_, upper_, velocity_, acceleration_;
  ArmModel arm_;
};

// Result of forward_kinematics(): poses of every joint frame and the tool frame, and the
// shoulder, elbow and wrist points, all in the BASE frame.
class KinematicState {
 public:
  JointVector q = JointVector::Zero();  // configuration this state was computed at [rad]
  std::array<Matrix3, kArmDof> R;       // aligned joint frames: column 2 is the joint axis
  std::array<Vector3, kArmDof> p;       // joint frame origins [m]
  Frame tool;                           // tool frame
  Vector3 shoulder, elbow, wrist;       // arm-angle points [m]

  // URDF joint frame i (0-based) in the BASE frame.
  Frame joint_frame(const KinematicModel& model, int i) const;
};

void forward_kinematics(const KinematicModel& model, const Eigen::Ref<const JointVector>& q,
                        KinematicState& state);

// Geometric Jacobian of a point rigidly attached to joint `joint`'s link (joints beyond
// it contribute zero columns): rows (linear velocity of the point [m/s], angular velocity
// [rad/s]), both in BASE coordinates. `point` is the point's current BASE position [m].
void point_jacobian(const KinematicState& state, int joint, const Eigen::Ref<const Vector3>& point,
                    Eigen::Ref<Jacobian6> jacobian);

// Geometric Jacobian of the tool frame, reference point at its origin.
void tool_jacobian(const KinematicState& state, Eigen::Ref<Jacobian6> jacobian);

}  // namespace tether
