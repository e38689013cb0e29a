// The resolvers on the comparison's scenarios, through the executor on the simulated arm:
// the spheres-of-influence patent's obstacle pass kept out of the spheres of influence by the
// constraints of the resolvers that carry them, and the table the comparison command prints.
#include "tether/remote/comparison/resolver_comparison.h"

#include <gtest/gtest.h>

#include <iostream>

#include "tether/common/urdf_loader.h"

namespace tether::remote {
namespace {

constexpr double kInfluence = 0.05;  // [m] of the obstacle pass's spheres

// The obstacle pass with `resolver`: it ran to the end, no link came closer than the
// sphere of influence (stated tolerance 1 mm: the measured joints lag the commanded ones)
// and the tool kept its path.
ScenarioResult expect_clear_pass(ResolverKind resolver) {
  ScenarioResult r = run_scenario(Scenario::kObstaclePass, resolver, load_default_arm(), {});
  std::cout << resolver_label(resolver) << ": clearance " << r.min_clearance * 1e3
            << " mm, tracking " << r.tracking_error * 1e3 << " mm, min p "
            << r.min_achieved_fraction << '\n';
  EXPECT_TRUE(r.completed) << r.breach;
  EXPECT_GT(r.min_clearance, kInfluence - 1e-3);
  EXPECT_LT(r.tracking_error, 0.015);
  return r;
}

TEST(ObstaclePass, DlsKeepsEveryLinkOutOfTheSpheresOfInfluenceWhileTheToolKeepsItsPath) {
  const ScenarioResult r = expect_clear_pass(ResolverKind::kDls);
  // The constraint took the redundancy: the operator saw p drop.
  EXPECT_LT(r.min_achieved_fraction, 1.0);
}

TEST(ObstaclePass, ConfigurationControlKeepsEveryLinkOutOfTheSpheresOfInfluence) {
  expect_clear_pass(ResolverKind::kConfigurationControl);
}

TEST(ObstaclePass, ConstrainedOptimisationTurnsTheElbowAwayEarlyAndKeepsTheHandOnItsPath) {
  const ArmModel arm = load_default_arm();
  const ScenarioResult dls = run_scenario(Scenario::kObstaclePass, ResolverKind::kDls, arm, {});
  for (const bool arm_angle_row : {false, true}) {
    SCOPED_TRACE(arm_angle_row ? "arm angle row" : "six rows");
    ComparisonOptions options;
    options.constrained_optimisation_arm_angle_row = arm_angle_row;
    const ScenarioResult r =
        run_scenario(Scenario::kObstaclePass, ResolverKind::kConstrainedOptimisation, arm, options);
    std::cout << "constrained optimisation" << (arm_angle_row ? ", arm angle row" : "")
              << ": clearance " << r.min_clearance * 1e3 << " mm, tracking "
              << r.tracking_error * 1e3 << " mm (DLS " << dls.tracking_error * 1e3 << " mm), min p "
              << r.min_achieved_fraction << '\n';
    EXPECT_TRUE(r.completed) << r.breach;
    EXPECT_GT(r.min_clearance, kInfluence - 1e-3);
    // The preferred velocity damper starts the self-motion while the acceleration limits
    // still allow it, so the hard rows never have to take p: the hand keeps its path at
    // least as well as DLS's (which ignores acceleration limits).
    EXPECT_LT(r.tracking_error, 2.0 * dls.tracking_error);
    EXPECT_GT(r.min_achieved_fraction, 0.99);
  }
}

TEST(ResolverComparison, ClosedPathWithDlsReturnsToTheSameJoints) {
  const ArmModel arm = load_default_arm();
  ComparisonOptions options;
  options.closed_path_laps = 3;
  const ScenarioResult r = run_scenario(Scenario::kClosedPath, ResolverKind::kDls, arm, options);
  EXPECT_TRUE(r.completed) << r.breach;
  // DLS tracks ψ as the seventh task coordinate, so a closed path in the motion space is a
  // closed path in the joints.
  EXPECT_LT(r.joint_drift, 1e-3);
  EXPECT_EQ(r.limit_violations, 0);
}

TEST(ResolverComparison, TableHasOneRowPerRunAndEveryColumn) {
  ScenarioResult a;
  a.scenario = Scenario::kClosedPath;
  a.resolver = ResolverKind::kShake;
  a.completed = true;
  a.tracking_error = 0.00214;
  a.min_clearance = kUnbounded;
  a.joint_drift = 0.5;
  a.compute_median = 20e-6;
  a.compute_p99 = 40e-6;
  ScenarioResult b = a;
  b.completed = false;
  b.breach = "torque 61 N·m exceeds the bound";
  const std::string table = comparison_table({a, b});
  EXPECT_NE(table.find("| closed path x20 | SHAKE + annealing | yes | 2.14 | none | 0 | "
                       "500.00 | 20.0 | 40.0 | 1.000 |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("no: torque 61 N·m exceeds the bound"), std::string::npos) << table;
}

}  // namespace
}  // namespace tether::remote
