#pragma once

// The same work through every redundancy resolver (issue: "compare them on the same
// work"). Each scenario is a task on the MuJoCo-simulated iiwa7, run by the executor in
// batch pacing (physics in lock-step, as fast as the machine goes); only the task's
// resolver.kind and that resolver's parameters differ between the rows.
//
// Scenarios:
//   door opening     the extended-task-space patent's door_force task (18 N·m about the hinge, 5
//   s), door scene obstacle pass    the tool slides 0.55 m sideways in 4 s past two spheres placed
//   9 cm
//                    beside the forearm's unconstrained path (the spheres-of-influence patent)
//   reach through a hole   the tool reaches 0.25 m along its approach axis through a ring
//                    of eight spheres 0.15 m ahead and comes back (the SHAKE patent, problem 1, in
//                    3-D)
//   closed path ×20  an octagon of radius 6 cm in the tool's x-y plane, 4 s per lap, 20 laps
//
// Figures per run (all from the executor's own telemetry and the simulated arm):
//   tracking error   max |x_c − x_r| translation [m] (trajectory scenarios); NaN for the
//                    door, whose zero stiffness leaves x_r without meaning
//   min clearance    smallest critical distance of any link to any obstacle [m], measured
//                    joints, capsule links; +inf where the scenario has no obstacle
//   limit violations cycles in which a measured joint was beyond its position limit or a
//                    commanded joint velocity beyond its velocity limit
//   joint drift      closed path only: max_i |q_i(end of lap 20) − q_i(end of lap 1)| [rad]
//   compute time     the executor's cycle (behaviours + impedance + resolver + bounds) [s],
//                    median and 99th percentile

#include <string>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote {

enum class Scenario { kDoorOpening, kObstaclePass, kReachThroughHole, kClosedPath };

const char* to_string(Scenario scenario);
// The table's name of a resolver, as docs/seeds.md names its method: "DLS (extended task space)".
const char* resolver_label(ResolverKind kind);

struct ComparisonOptions {
  std::string task_dir;  // where door_force.textproto lives; empty: the source tree's
  int closed_path_laps = 20;
  // Constrained optimisation with the arm angle as its 7th task row instead of the seed's six
  // rows with ψ free (its row label then says so).
  bool constrained_optimisation_arm_angle_row = false;
};

struct ScenarioResult {
  Scenario scenario = Scenario::kDoorOpening;
  ResolverKind resolver = ResolverKind::kDls;
  bool completed = false;  // ran to the end without a breach
  std::string breach;      // what stopped it, if anything
  double duration = 0.0;   // task time run [s]
  double tracking_error = 0.0;
  double min_clearance = 0.0;
  int limit_violations = 0;
  double joint_drift = 0.0;
  double compute_median = 0.0;
  double compute_p99 = 0.0;
  double min_achieved_fraction = 1.0;  // smallest p over the run
  std::string outcome;                 // the scenario's own figure, e.g. the door angle
  std::string label;                   // the table's resolver column; empty: resolver_label
};

// The scenario's task with `resolver` selected and configured for it.
TaskParameters scenario_task(Scenario scenario, ResolverKind resolver, const ArmModel& arm,
                             const ComparisonOptions& options);

ScenarioResult run_scenario(Scenario scenario, ResolverKind resolver, const ArmModel& arm,
                            const ComparisonOptions& options);

// A Markdown table of the results, one row per run.
std::string comparison_table(const std::vector<ScenarioResult>& results);

}  // namespace tether::remote
