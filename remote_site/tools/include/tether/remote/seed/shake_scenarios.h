#pragma once

// The SHAKE patent's three test problems, run with the SHAKE + annealing resolver, and their
// pictures. The runs are shared by the scenario tests (which assert their outcomes) and by
// tether-seed-pictures (which draws them), so a picture always shows what the tests check.
//
// Time: resolver step k is at k · 0.01 s (ObjectiveWeights::dt); positions in metres.

#include <Eigen/Core>
#include <string>
#include <vector>

#include "tether/remote/resolvers/shake/objective.h"

namespace tether::remote::seed {

using Chain2 = std::vector<Eigen::Vector2d>;
using Chain3 = std::vector<Eigen::Vector3d>;

inline constexpr double kShakeStepTime = 0.01;  // [s] per resolver step

// (1) A 4-link planar robot reaches through a hole in a wall and pulls back out.
struct ShakeHoleRun {
  std::vector<shake::Polygon> walls;
  std::vector<Eigen::Vector2d> path;  // the target of step k+1 at [k]
  std::vector<Chain2> chains;         // the start, then after every step
  bool initial_converged = false;     // SHAKE restored the starting arch's link lengths
  int placed_steps = 0;               // steps whose end effector reached its target
  double min_clearance = 0.0;         // [m] over the run
  double elapsed = 0.0;               // [s] wall time of the steps
};
ShakeHoleRun run_shake_hole();
void write_shake_hole_picture(const ShakeHoleRun& run, const std::string& path);

// (2) One or two redundant DOF (links = 4 or 5) machining part of a circular workpiece
// periodically; periodic_weight 0 switches the periodic term off.
struct ShakeCircleRun {
  int links = 4;
  double periodic_weight = 0.0;
  Eigen::Vector2d centre = Eigen::Vector2d::Zero();
  double workpiece = 0.0;  // [m] radius
  int period = 0, periods = 0;
  std::vector<Eigen::Vector2d> path;
  std::vector<Chain2> chains;
  bool initial_converged = false;
  int placed_steps = 0;
  double min_clearance = 0.0;    // [m]
  double worst_alignment = 0.0;  // [rad] from period 2 on (the arm starts from an arbitrary arch)
  std::vector<double> residual;  // [m] largest cyclicity residual of each period
  long long first_cyclic_step = -1;
  double elapsed = 0.0;
};
ShakeCircleRun run_shake_circle(int links, double periodic_weight);
void write_shake_circle_picture(const ShakeCircleRun& run, const std::string& path);

// (3) A spatial arm traces the front face of a box workpiece, aligned at its four corners.
struct ShakeCornersRun {
  shake::Box box;
  std::vector<Eigen::Vector3d> corners, path;
  std::vector<Chain3> chains;
  std::vector<double> corner_error;  // [rad] alignment at each corner on the last lap
  bool initial_converged = false;
  int placed_steps = 0;
  double min_clearance = 0.0;
  double elapsed = 0.0;
};
ShakeCornersRun run_shake_corners();
void write_shake_corners_picture(const ShakeCornersRun& run, const std::string& path);

}  // namespace tether::remote::seed
