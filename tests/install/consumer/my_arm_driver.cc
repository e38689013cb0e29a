// An integrator's arm behind tether's executor: a joint-servo arm that reaches each
// commanded position by the next cycle. The executor tracks a 3 cm trajectory on it; the
// program exits 0 only if the arm got there.
#include <cmath>
#include <cstdio>

#include "tether/common/kinematics.h"
#include "tether/common/motion_space.h"
#include "tether/common/urdf_loader.h"
#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"

namespace {

using namespace tether;
using namespace tether::remote;

class MyServoArm final : public ArmInterface {
 public:
  MyServoArm(const ArmModel& model, const JointVector& q0) : model_(model) { state_.position = q0; }
  const ArmModel& model() const override { return model_; }
  ArmStatus read(ArmState& state) noexcept override {
    state = state_;
    return ArmStatus::kOk;
  }
  ArmStatus write(const JointCommand& command) noexcept override {
    pending_ = command.position;
    return ArmStatus::kOk;
  }
  void advance_to(double time) noexcept override {
    state_.position = pending_;
    state_.time = time;
  }
  const JointVector& q() const { return state_.position; }

 private:
  ArmModel model_;
  ArmState state_;
  JointVector pending_ = JointVector::Zero();
};

}  // namespace

int main() {
  const ArmModel model = load_default_arm();
  JointVector home;
  home << 0.1, 0.5, -0.1, -1.2, 0.2, 0.9, 0.3;
  MyServoArm arm(model, home);
  HandControllerQueue queue;
  Executor executor(model, queue);
  ControlLoop loop(arm, executor, Pacing::kBatch);

  const KinematicModel kin(model);
  KinematicState s;
  forward_kinematics(kin, home, s);
  TaskParameters task;
  task.name = "consumer";
  task.period = 0.001;
  task.tool_T_motion.R = s.tool.R.transpose();
  task.impedance.mass.setConstant(1.0);
  task.impedance.damping.setConstant(80.0);
  task.impedance.stiffness.setConstant(1600.0);
  task.trajectory.enabled = true;
  Frame goal;
  goal.p = Vector3(0.0, 0.0, 0.03);
  task.trajectory.waypoints.push_back(Waypoint{1.0, goal, 0.2});

  loop.run_cycles(1);
  const Vector3 start = motion_frame_pose(s, task.tool_T_motion).p;
  executor.submit(task);
  loop.run_cycles(1600);
  forward_kinematics(kin, arm.q(), s);
  const double rise = motion_frame_pose(s, task.tool_T_motion).p.z() - start.z();
  std::printf("state %s, MOTION origin rose %.2f mm of 30 mm\n", to_string(executor.status().state),
              rise * 1e3);
  return executor.status().state == ExecutorState::kRunning && std::abs(rise - 0.03) < 5e-4 ? 0 : 1;
}
