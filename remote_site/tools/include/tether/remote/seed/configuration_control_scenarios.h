#pragma once

// The configuration-control patent on the iiwa7 at the kinematic level: the hand holds its
// pose (ẋ_c head = 0) while a user kinematic function reconfigures the arm, q += q̇·dt at
// 1 ms. The runs are shared by the scenario tests (which assert the outcomes) and by
// tether-seed-pictures (which draws them).

#include <array>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tether/common/obstacles.h"
#include "tether/common/types.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::remote::seed {

using ArmChain = std::array<Vector3, 5>;  // base, shoulder, elbow, wrist, tool; BASE [m]

struct ConfigurationControlScenario {
  std::vector<KinematicFunctionParameters> functions;
  double seconds = 3.0;
  // ẋ_c[6] from ψ, as the impedance law's spring on the arm angle would give it.
  std::function<double(double psi)> arm_angle_rate = [](double) { return 0.0; };
  std::vector<SphereObstacle> obstacles;
};

struct ConfigurationControlRun {
  std::vector<double> times;           // [s] every 100 ms
  std::vector<ArmChain> chains;        // at those times
  std::vector<double> psi, cost;       // ψ [rad] and G [N²·m²] at those times
  double max_position_drift = 0.0;     // [m] of the MOTION frame from its start
  double max_orientation_drift = 0.0;  // [rad]
  double min_limit_margin = std::numeric_limits<double>::infinity();            // [rad]
  double min_clearance_to_influence = std::numeric_limits<double>::infinity();  // d − influence [m]
  std::vector<double> clearance_to_influence;  // [m] at `times`, +inf without obstacles
  double max_speed = 0.0;                      // max |q̇_i| [rad/s]
  double min_achieved_fraction = 1.0;
  int failed_steps = 0;  // cycles whose status was not kOk (the run stops at the first)
  int active_steps = 0;  // cycles with an obstacle constraint enforced
  JointVector q = JointVector::Zero();  // at the end
};

// Runs `scenario` on the iiwa7 from q0.
ConfigurationControlRun run_configuration_control(const JointVector& q0,
                                                  const ConfigurationControlScenario& scenario);

// ẋ_c[6] that turns ψ toward `target` at up to 0.5 rad/s.
double arm_angle_rate_towards(double target, double psi);

// The iiwa7's ψ at q [rad].
double arm_angle_at(const JointVector& q);

// The seed scenarios the tests check and the pictures show.
struct ElbowPlaneRun {
  double psi_start = 0.0, target = 0.0;
  ConfigurationControlRun run;
};
ElbowPlaneRun run_elbow_plane();  // ψ turned by 0.8 rad, the hand still

// An arm reaching low and forward whose elbow the arm-angle function first turned 2 rad to
// the side (`turn`, 6 s), then the gravity-torque function lowering G = Σ τ_g² along the
// self-motion for 5 s (`run`, from `start`).
struct GravityTorqueRun {
  JointVector start = JointVector::Zero();
  ConfigurationControlRun turn, run;
};
GravityTorqueRun run_gravity_torque();

// The elbow plane turned toward ψ + 0.8 rad as in run_elbow_plane(), with a sphere (radius
// 4 cm, influence 5 cm) where the free run's elbow ended; the arm-angle function yields
// (weight 1e-4) so the constraint takes the self-motion.
struct ElbowObstacleRun {
  double psi_start = 0.0, target = 0.0;
  SphereObstacle obstacle;
  ConfigurationControlRun unobstructed, run;
};
ElbowObstacleRun run_elbow_obstacle();

// The picture: the chain over time seen along the shoulder→wrist axis and in BASE x–z, with
// the obstacles and their spheres of influence, and ψ against time (with `psi_target` as a
// reference line when finite) and, if asked, G = Σ τ_g² against time beside it.
void write_configuration_control_picture(const ConfigurationControlRun& run,
                                         const std::vector<SphereObstacle>& obstacles,
                                         const std::string& title, const std::string& subtitle,
                                         double psi_target, const std::string& path,
                                         bool show_gravity_cost = false);
void write_elbow_plane_picture(const ElbowPlaneRun& run, const std::string& path);
void write_gravity_torque_picture(const GravityTorqueRun& run, const std::string& path);
void write_elbow_obstacle_picture(const ElbowObstacleRun& run, const std::string& path);

}  // namespace tether::remote::seed
