#include "tether/remote/comparison/resolver_comparison.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "tether/common/kinematics.h"
#include "tether/common/obstacles.h"
#include "tether/common/units.h"
#include "tether/proto/task_io.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/sim/simulated_arm.h"

namespace tether::remote {

namespace {

// Constrained optimisation's reference-posture criterion β (per joint; q_ref = the scenario's
// start posture), to be tuned by whoever works on that resolver.
constexpr double kConstrainedOptimisationBeta = 1e-3;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

// A free-space start with the elbow bent and the wrist clear of every limit.
const JointVector kStart = (JointVector() << -0.45, 0.5, 0.0, -1.4, 0.0, 0.9, 0.0).finished();

constexpr double kPassDuration = 4.0;     // [s] the sideways slide
constexpr double kHoleDepth = 0.25;       // [m] reach along the approach axis
constexpr double kHoleAhead = 0.15;       // [m] ring centre ahead of the start
constexpr double kHoleRingRadius = 0.13;  // [m] sphere centres from the axis
constexpr double kLapTime = 4.0;          // [s]
constexpr int kLapCorners = 8;
constexpr double kLapRadius = 0.06;  // [m]
// SHAKE's periodic term on the closed path (the SHAKE patent: a ring buffer of one period, a
// pull of the elbow toward its place one period earlier, switched on smoothly after one
// period): its weight against the velocity term's 1e-3, and the switch-on time.
constexpr double kShakePeriodicWeight = 1e3;
constexpr double kShakePeriodicRamp = 1.0;  // [s]

struct Run {
  std::vector<JointVector> commanded;
  ScenarioResult result;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const auto k =
      static_cast<std::size_t>(std::clamp(p, 0.0, 1.0) * static_cast<double>(v.size() - 1));
  return v[k];
}

Frame start_tool(const ArmModel& arm) {
  const KinematicModel model(arm);
  KinematicState state;
  forward_kinematics(model, kStart, state);
  return state.tool;
}

TaskParameters pass_trajectory(const ArmModel& arm) {
  TaskParameters t;
  t.name = "obstacle_pass";
  t.trajectory.enabled = true;
  Frame goal;  // relative: in the start MOTION (= tool) axes
  goal.p = start_tool(arm).R.transpose() * Vector3(0.0, 0.55, 0.0);
  t.trajectory.waypoints.push_back(Waypoint{kPassDuration, goal, 0.0});
  return t;
}

ScenarioResult run_task(Scenario scenario, const TaskParameters& task, const ArmModel& arm,
                        double duration, std::vector<JointVector>* commanded);

// Two spheres 9 cm beside where the forearm passes at 45 % and 90 % of the slide without
// avoidance (found by running it once with DLS): obstacle radius 3 cm, influence 5 cm, so
// the unconstrained forearm (capsule radius 4 cm) would cut 3 cm into each sphere of
// influence. Beside the arm plane, where the elbow's self-motion can take it away.
std::vector<ObstacleSphereParameters> pass_obstacles(const ArmModel& arm) {
  static std::map<std::string, std::vector<ObstacleSphereParameters>> cache;
  const auto it = cache.find(arm.name);
  if (it != cache.end()) return it->second;
  std::vector<JointVector> commanded;
  run_task(Scenario::kObstaclePass, pass_trajectory(arm), arm, kPassDuration, &commanded);
  const KinematicModel model(arm);
  KinematicState state;
  std::vector<ObstacleSphereParameters> obstacles;
  for (double fraction : {0.45, 0.9}) {
    const auto k = static_cast<std::size_t>(fraction * static_cast<double>(commanded.size() - 1));
    forward_kinematics(model, commanded[k], state);
    const Vector3 side =
        (state.elbow - state.shoulder).cross(state.wrist - state.shoulder).normalized();
    obstacles.push_back({state.p[4] + 0.09 * side, 0.03, 0.05});
  }
  cache[arm.name] = obstacles;
  return obstacles;
}

void configure_resolver(ResolverKind kind, const JointVector& start,
                        const ComparisonOptions& options, TaskParameters& t) {
  t.resolver.kind = kind;
  switch (kind) {
    case ResolverKind::kDls:
      break;
    case ResolverKind::kConfigurationControl: {
      // Seraji's elbow-plane function: the hand's six rows plus ψ.
      KinematicFunctionParameters elbow;
      elbow.kind = KinematicFunctionKind::kArmAngle;
      // With exactly seven rows the weights do not change the solution; they decide what
      // gives way when an obstacle constraint binds: the self-motion, not the hand.
      elbow.weight = kArmAngleYield;
      t.resolver.configuration_control.functions = {elbow};
      break;
    }
    case ResolverKind::kConstrainedOptimisation:
      // The seed's form: the six hand rows, the self-motion left to the criteria, among them
      // the reference posture (the start); or ψ as a 7th task row.
      t.resolver.constrained_optimisation.track_arm_angle =
          options.constrained_optimisation_arm_angle_row;
      t.resolver.constrained_optimisation.beta.setConstant(kConstrainedOptimisationBeta);
      t.resolver.constrained_optimisation.q_ref = start;
      break;
    case ResolverKind::kShake:
      break;
  }
}

}  // namespace

const char* to_string(Scenario scenario) {
  switch (scenario) {
    case Scenario::kDoorOpening:
      return "door opening";
    case Scenario::kObstaclePass:
      return "obstacle pass";
    case Scenario::kReachThroughHole:
      return "reach through a hole";
    case Scenario::kClosedPath:
      return "closed path x20";
  }
  return "unknown";
}

const char* resolver_label(ResolverKind kind) {
  switch (kind) {
    case ResolverKind::kDls:
      return "DLS (extended task space)";
    case ResolverKind::kConfigurationControl:
      return "configuration control";
    case ResolverKind::kConstrainedOptimisation:
      return "constrained optimisation";
    case ResolverKind::kShake:
      return "SHAKE + annealing";
  }
  return "unknown";
}

TaskParameters scenario_task(Scenario scenario, ResolverKind resolver, const ArmModel& arm,
                             const ComparisonOptions& options) {
  TaskParameters t;
  switch (scenario) {
    case Scenario::kDoorOpening: {
      const std::string dir = options.task_dir.empty()
                                  ? std::string(TETHER_REMOTE_SOURCE_DIR) + "/tasks"
                                  : options.task_dir;
      t = proto::load_task_file(dir + "/door_force.textproto");
      break;
    }
    case Scenario::kObstaclePass: {
      t = pass_trajectory(arm);
      t.obstacle_avoidance.enabled = true;
      t.obstacle_avoidance.obstacles = pass_obstacles(arm);
      t.obstacle_avoidance.link_radius.setConstant(0.04);
      break;
    }
    case Scenario::kReachThroughHole: {
      t.name = "reach_through_hole";
      t.trajectory.enabled = true;
      Frame in;
      in.p = Vector3(0.0, 0.0, kHoleDepth);
      t.trajectory.waypoints.push_back(Waypoint{3.0, in, 0.0});
      t.trajectory.waypoints.push_back(Waypoint{6.0, Frame::Identity(), 0.0});
      const Frame tool = start_tool(arm);
      const Vector3 axis = tool.R.col(2);
      const Vector3 centre = tool.p + kHoleAhead * axis;
      t.obstacle_avoidance.enabled = true;
      for (int k = 0; k < 8; ++k) {
        const double angle = 2.0 * kPi * k / 8.0;
        const Vector3 radial = std::cos(angle) * tool.R.col(0) + std::sin(angle) * tool.R.col(1);
        t.obstacle_avoidance.obstacles.push_back({centre + kHoleRingRadius * radial, 0.02, 0.03});
      }
      t.obstacle_avoidance.link_radius.setConstant(0.04);
      break;
    }
    case Scenario::kClosedPath: {
      t.name = "closed_path";
      t.trajectory.enabled = true;
      for (int lap = 0; lap < options.closed_path_laps; ++lap) {
        for (int k = 1; k <= kLapCorners; ++k) {
          const double angle = 2.0 * kPi * k / kLapCorners;
          Frame corner;
          corner.p =
              Vector3(kLapRadius * (std::cos(angle) - 1.0), kLapRadius * std::sin(angle), 0.0);
          const double time = kLapTime * (lap + static_cast<double>(k) / kLapCorners);
          t.trajectory.waypoints.push_back(Waypoint{time, corner, 0.0});
        }
      }
      break;
    }
  }
  configure_resolver(
      resolver,
      scenario == Scenario::kDoorOpening ? default_initial_position(SceneKind::kDoor, arm) : kStart,
      options, t);
  if (scenario == Scenario::kClosedPath && resolver == ResolverKind::kShake) {
    t.resolver.shake.period = kLapTime;
    t.resolver.shake.periodic_weight = kShakePeriodicWeight;
    t.resolver.shake.periodic_ramp = kShakePeriodicRamp;
  }
  return t;
}

namespace {

double duration_of(Scenario scenario, const ComparisonOptions& options) {
  switch (scenario) {
    case Scenario::kDoorOpening:
      return 5.0;
    case Scenario::kObstaclePass:
      return kPassDuration + 0.5;
    case Scenario::kReachThroughHole:
      return 6.5;
    case Scenario::kClosedPath:
      return kLapTime * options.closed_path_laps + 0.5;
  }
  return 1.0;
}

ScenarioResult run_task(Scenario scenario, const TaskParameters& task, const ArmModel& arm_model,
                        double duration, std::vector<JointVector>* commanded) {
  ScenarioResult r;
  r.scenario = scenario;
  r.resolver = task.resolver.kind;
  const KinematicModel model(arm_model);
  SimulationOptions options;
  options.scene = scenario == Scenario::kDoorOpening ? SceneKind::kDoor : SceneKind::kFreeSpace;
  options.initial_position = scenario == Scenario::kDoorOpening
                                 ? default_initial_position(SceneKind::kDoor, arm_model)
                                 : kStart;
  SimulatedArm arm(arm_model, options);
  HandControllerQueue queue;
  Executor executor(arm_model, queue);
  try {
    executor.submit(task);
  } catch (const std::exception& e) {
    r.breach = e.what();
    return r;
  }

  std::vector<SphereObstacle> spheres;
  const Frame base_T_world = task.world_T_base.inverse();
  if (task.obstacle_avoidance.enabled) {
    for (const auto& o : task.obstacle_avoidance.obstacles) {
      spheres.push_back({base_T_world * o.centre, o.radius, o.influence});
    }
  }
  std::array<CriticalPoint, kMaxCriticalPoints> points;
  KinematicState measured;

  const auto cycles = static_cast<int>(std::lround(duration / task.period));
  const auto lap_cycles = static_cast<int>(std::lround(kLapTime / task.period));
  std::vector<double> compute;
  compute.reserve(static_cast<std::size_t>(cycles));
  ArmState state;
  JointCommand command;
  double arm_time = 0.0;
  JointVector after_first_lap = JointVector::Constant(kNaN);
  JointVector after_last_lap = JointVector::Constant(kNaN);
  const int laps = static_cast<int>(std::floor((duration - 0.5) / kLapTime + 0.5));
  r.tracking_error = 0.0;
  r.min_clearance = kUnbounded;
  bool running = true;
  int k = 0;
  for (; k < cycles; ++k) {
    const ArmStatus status = arm.read(state);
    const auto t0 = std::chrono::steady_clock::now();
    const ExecutorState s = executor.cycle(state, status, command);
    const auto t1 = std::chrono::steady_clock::now();
    arm.write(command);
    arm_time += task.period;
    arm.advance_to(arm_time);
    compute.push_back(std::chrono::duration<double>(t1 - t0).count());
    if (s != ExecutorState::kRunning) {
      running = false;
      r.breach = describe(executor.status().breach);
      break;
    }
    const CycleTelemetry& c = executor.last_cycle();
    if (commanded != nullptr) commanded->push_back(c.commanded_joints);
    r.tracking_error = std::max(r.tracking_error, c.error.head<3>().norm());
    r.min_achieved_fraction = std::min(r.min_achieved_fraction, c.achieved_fraction);
    bool violation = false;
    for (int i = 0; i < kArmDof; ++i) {
      violation = violation || state.position[i] < model.lower_limits()[i] - 1e-9 ||
                  state.position[i] > model.upper_limits()[i] + 1e-9 ||
                  std::abs(command.velocity[i]) > model.velocity_limits()[i] * (1.0 + 1e-9);
    }
    if (violation) ++r.limit_violations;
    if (!spheres.empty()) {
      forward_kinematics(model, state.position, measured);
      const std::size_t n =
          critical_points(measured, task.obstacle_avoidance.link_radius, spheres, points);
      for (std::size_t j = 0; j < n; ++j) {
        r.min_clearance = std::min(r.min_clearance, points[j].distance);
      }
    }
    if (scenario == Scenario::kClosedPath) {
      if (k + 1 == lap_cycles) after_first_lap = c.commanded_joints;
      if (k + 1 == laps * lap_cycles) after_last_lap = c.commanded_joints;
    }
  }
  r.completed = running;
  r.duration = k * task.period;
  r.compute_median = percentile(compute, 0.5);
  r.compute_p99 = percentile(compute, 0.99);
  r.joint_drift = scenario == Scenario::kClosedPath
                      ? (after_last_lap - after_first_lap).cwiseAbs().maxCoeff()
                      : kNaN;
  if (scenario == Scenario::kDoorOpening) {
    r.tracking_error = kNaN;
    char text[64];
    std::snprintf(text, sizeof text, "door %.1f deg after %.1f s",
                  executor.last_cycle().aux[0] * kRadToDeg, r.duration);
    r.outcome = text;
  }
  return r;
}

std::string fixed(double v, double scale, int digits) {
  if (std::isnan(v)) return "–";
  if (std::isinf(v)) return "none";
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v * scale);
  return text;
}

}  // namespace

ScenarioResult run_scenario(Scenario scenario, ResolverKind resolver, const ArmModel& arm,
                            const ComparisonOptions& options) {
  const TaskParameters task = scenario_task(scenario, resolver, arm, options);
  ScenarioResult r = run_task(scenario, task, arm, duration_of(scenario, options), nullptr);
  if (resolver == ResolverKind::kConstrainedOptimisation &&
      options.constrained_optimisation_arm_angle_row) {
    r.label = "constrained optimisation, arm angle row";
  }
  return r;
}

std::string comparison_table(const std::vector<ScenarioResult>& results) {
  std::ostringstream out;
  out << "| scenario | resolver | ran to the end | tracking error [mm] | min clearance [mm] "
         "| limit violations | joint drift [mrad] | cycle median [µs] | cycle p99 [µs] "
         "| min p | outcome |\n"
      << "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const ScenarioResult& r : results) {
    out << "| " << to_string(r.scenario) << " | "
        << (r.label.empty() ? resolver_label(r.resolver) : r.label) << " | "
        << (r.completed ? "yes" : "no: " + r.breach) << " | " << fixed(r.tracking_error, 1e3, 2)
        << " | " << fixed(r.min_clearance, 1e3, 1) << " | " << r.limit_violations << " | "
        << fixed(r.joint_drift, 1e3, 2) << " | " << fixed(r.compute_median, 1e6, 1) << " | "
        << fixed(r.compute_p99, 1e6, 1) << " | " << fixed(r.min_achieved_fraction, 1.0, 3) << " | "
        << (r.outcome.empty() ? "" : r.outcome) << " |\n";
  }
  return out.str();
}

}  // namespace tether::remote
