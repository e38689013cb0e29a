#pragma once

// The resolver's inputs at a configuration, built the way the executor builds them: forward
// kinematics, the composite Jacobian with rows 0-5 in MOTION axes, ψ.

#include "tether/common/kinematics.h"
#include "tether/common/motion_space.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/resolvers/resolver.h"

namespace tether::remote::testing {

struct ArmFixture {
  ArmFixture() : model(load_arm_by_name("iiwa7", UrdfLoadOptions{})) {}

  // Fills state, jacobian, arm angle and `input` (xd and weights untouched) at q.
  void at(const JointVector& q) {
    forward_kinematics(model, q, state);
    ArmAngle psi;
    composite_jacobian(model, state, arm_angle_model, tool_T_motion, jacobian, psi);
    motion_pose = motion_frame_pose(state, tool_T_motion);
    express_in_frame(motion_pose.R, jacobian);
    input.model = &model;
    input.state = &state;
    input.jacobian = &jacobian;
    input.motion_pose = motion_pose;
    input.tool_T_motion = tool_T_motion;
    input.arm_angle = psi.psi;
    input.q = q;
  }

  KinematicModel model;
  ArmAngleModel arm_angle_model;
  Frame tool_T_motion = Frame::Identity();
  KinematicState state;
  CompositeJacobian jacobian = CompositeJacobian::Zero();
  Frame motion_pose;
  ResolverInput input;
};

// A reaching posture of the iiwa7, well inside its limits and away from singularities.
inline JointVector iiwa_posture() {
  JointVector q;
  q << 0.3, 0.6, -0.2, -1.3, 0.3, 0.9, 0.2;
  return q;
}

}  // namespace tether::remote::testing
