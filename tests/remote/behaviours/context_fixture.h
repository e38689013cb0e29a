#pragma once

// Builds a consistent BehaviourContext for the behaviour tests: forward kinematics, the
// arm angle, the composite Jacobian re-expressed in MOTION axes (rows 0-5 about the MOTION
// origin, row 6 = ∂ψ/∂q) and the MOTION pose, all at the same joints, exactly as the
// executor is to build them every cycle.

#include <random>
#include <utility>
#include <vector>

#include "../../common/test_arms.h"
#include "tether/common/arm_angle.h"
#include "tether/common/kinematics.h"
#include "tether/common/motion_space.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/behaviours/behaviour.h"

namespace tether::testing {

class BehaviourContextFixture {
 public:
  explicit BehaviourContextFixture(const ArmModel& arm,
                                   const Frame& tool_T_motion = Frame::Identity(),
                                   const Vector3& arm_angle_reference = Vector3::UnitZ())
      : model_(arm), arm_angle_model_(arm_angle_reference) {
    context_.model = &model_;
    context_.joints = &q_;
    context_.kinematics = &state_;
    context_.jacobian = &jacobian_;
    context_.arm = &arm_state_;
    context_.tool_T_motion = tool_T_motion;
    set(JointVector::Zero());
  }
  // The context points into this object.
  BehaviourContextFixture(const BehaviourContextFixture&) = delete;
  BehaviourContextFixture& operator=(const BehaviourContextFixture&) = delete;

  // Moves the commanded (and measured) joints to q and recomputes everything.
  void set(const JointVector& q) {
    q_ = q;
    arm_state_.position = q;
    forward_kinematics(model_, q_, state_);
    composite_jacobian(model_, state_, arm_angle_model_, context_.tool_T_motion, jacobian_, psi_);
    context_.motion_pose = motion_frame_pose(state_, context_.tool_T_motion);
    express_in_frame(context_.motion_pose.R, jacobian_);
    context_.arm_angle = psi_.psi;
  }
  void set_tool_T_motion(const Frame& tool_T_motion) {
    context_.tool_T_motion = tool_T_motion;
    set(q_);
  }

  const remote::BehaviourContext& context() const { return context_; }
  remote::BehaviourContext& context() { return context_; }
  remote::ArmState& arm_state() { return arm_state_; }
  const KinematicModel& model() const { return model_; }
  const KinematicState& state() const { return state_; }
  const CompositeJacobian& jacobian() const { return jacobian_; }
  const ArmAngle& arm_angle() const { return psi_; }
  const JointVector& q() const { return q_; }

  // Seeded configurations uniform inside the joint limits less `margin`.
  std::vector<JointVector> random_configurations(int count, unsigned seed,
                                                 double margin = 0.0) const {
    return ::tether::testing::random_configurations(model_, count, seed, margin);
  }

 private:
  KinematicModel model_;
  ArmAngleModel arm_angle_model_;
  JointVector q_ = JointVector::Zero();
  KinematicState state_;
  CompositeJacobian jacobian_ = CompositeJacobian::Zero();
  ArmAngle psi_;
  remote::ArmState arm_state_;
  remote::BehaviourContext context_;
};

// Both shipped arms, by name, for parameterised loops.
inline std::vector<std::pair<const char*, ArmModel>> behaviour_test_arms() {
  std::vector<std::pair<const char*, ArmModel>> arms;
  arms.emplace_back("iiwa7", load_default_arm());
  arms.emplace_back("panda", load_panda_arm());
  return arms;
}

}  // namespace tether::testing
