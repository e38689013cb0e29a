#pragma once

// Runs one task parameter set on an arm for a given time and records what happened: the
// engine behind `tether-remote --task` and the scenario tests. Not real-time code itself —
// it drives a ControlLoop (batch or real-time pacing) and drains its telemetry.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tether/remote/arm/arm_interface.h"
#include "tether/remote/behaviours/teleoperation/teleoperation.h"
#include "tether/remote/loop/control_loop.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

// A hand-controller script: called once per control cycle with the task time [s]; returns
// the increment for that cycle (a stream of samples keeps the teleoperation deadline met).
using HandControllerScript = std::function<HandControllerSample(double time, double dt)>;

struct TaskRunOptions {
  double duration = 10.0;  // [s] of task time
  Pacing pacing = Pacing::kBatch;
  int loop_cpu = -1;  // real time: the CPU the control loop is pinned to; −1: not pinned
  HandControllerScript hand_controller;  // empty: no hand-controller stream
  int record_every = 1;                  // keep every n-th cycle
};

struct TaskRunRecord {
  std::vector<double> time;         // [s] task time
  std::vector<double> aux0;         // the arm's aux[0] (door angle [rad] in the door scene)
  std::vector<double> force;        // |f| at the MOTION origin [N]
  std::vector<double> torque;       // |τ| about the MOTION origin [N·m]
  std::vector<MotionVector> error;  // x_c − x_r
  std::vector<Vector6> wrench;      // compensated wrench, MOTION frame
  std::vector<JointVector> joints;  // commanded
  std::vector<JointVector> measured_joints;
  std::vector<MotionVector> velocity;   // ẋ_c
  std::vector<MotionVector> force_sum;  // ΣF
  ExecutorState final_state = ExecutorState::kIdle;
  BreachEvent breach;  // first breach, if any
  std::uint64_t cycles = 0;
  LoopStatistics statistics;
  TeleoperationCounters teleoperation;
  double peak_force = 0.0, peak_torque = 0.0;
};

// Validates and submits `task` (throws TaskValidationError with every problem, nothing
// applied) and runs it. The executor and loop are created for the run.
TaskRunRecord run_task(ArmInterface& arm, const TaskParameters& task,
                       const TaskRunOptions& options);

// CSV with one row per recorded cycle (time, aux0, |f|, |τ|, wrench, error, joints).
void write_csv(const TaskRunRecord& record, const std::string& path);

}  // namespace tether::remote
