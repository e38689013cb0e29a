#pragma once

// A kinematic arm for executor tests: ideal servos (the measured joints are the last
// command), an optional virtual wall under the tool (a horizontal plane at BASE z = wall_z
// with stiffness k), and an optional extra tool weight for the wrench sensor.

#include <cmath>

#include "tether/common/kinematics.h"
#include "tether/remote/arm/arm_interface.h"

namespace tether::remote::testing {

class FakeArm final : public ArmInterface {
 public:
  FakeArm(const ArmModel& arm, const JointVector& q0) : arm_(arm), model_(arm) {
    state_.position = q0;
  }
  const ArmModel& model() const override { return arm_; }
  ArmStatus read(ArmState& state) noexcept override {
    forward_kinematics(model_, state_.position, kin_);
    Vector3 f_wall = Vector3::Zero();
    if (wall_stiffness > 0.0 && kin_.tool.p.z() < wall_z) {
      f_wall.z() = -wall_stiffness * (wall_z - kin_.tool.p.z());  // pushing down into it
    }
    // The arm holds the tool up: +m·g along BASE z, acting at the tool's centre of mass.
    const Vector3 hold = kin_.tool.R.transpose() * Vector3(0, 0, tool_mass * 9.81);
    state_.wrench.head<3>() = kin_.tool.R.transpose() * f_wall + hold;
    state_.wrench.tail<3>() = tool_com.cross(hold);
    state_.wrench_valid = wrench_valid;
    state_.proximity = proximity;
    state_.visual = visual;
    state = state_;
    return status;
  }
  ArmStatus write(const JointCommand& command) noexcept override {
    pending_ = command.position;
    ++writes;
    return ArmStatus::kOk;
  }
  void advance_to(double time) noexcept override {
    state_.velocity = (pending_ - state_.position) / std::max(time - state_.time, 1e-9);
    state_.position = pending_;
    state_.time = time;
  }
  const KinematicState& kinematics() const { return kin_; }

  double wall_z = -1e9;
  double wall_stiffness = 0.0;
  double tool_mass = 0.0;
  Vector3 tool_com = Vector3::Zero();
  bool wrench_valid = true;
  ProximityReading proximity;
  VisualReading visual;
  ArmStatus status = ArmStatus::kOk;
  int writes = 0;

 private:
  ArmModel arm_;
  KinematicModel model_;
  KinematicState kin_;
  ArmState state_;
  JointVector pending_ = JointVector::Zero();
};

}  // namespace tether::remote::testing
