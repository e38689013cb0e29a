#include "tether/remote/behaviours/singularity_robustness/singularity_robustness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "context_fixture.h"
#include "tether/common/dls.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

double radius(const BehaviourContextFixture& fixture) {
  return (fixture.state().wrist - fixture.state().p[0]).norm();
}

SingularityRobustnessParameters params_with(double r_min, double r_max, double gain) {
  SingularityRobustnessParameters params;
  params.enabled = true;
  params.r_min = r_min;
  params.r_max = r_max;
  params.gain = gain;
  return params;
}

// An annulus that random configurations of the arm fall on both sides of (iiwa: |P| up to
// 0.99 m; panda: up to 0.72 m).
std::pair<double, double> annulus_of(const std::string& arm) {
  return arm == "iiwa7" ? std::pair{0.55, 0.85} : std::pair{0.4, 0.68};
}

TEST(SingularityRobustness, AddsNoWeightInsideTheAnnulusAndTheDepthTimesTheGainOutside) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(arm);
    const auto [r_min, r_max] = annulus_of(name);
    const auto params = params_with(r_min, r_max, 3.0);
    SingularityRobustness behaviour;
    behaviour.reset(params, fixture.context());
    int inner = 0, outer = 0;
    for (const JointVector& q : fixture.random_configurations(200, 13)) {
      fixture.set(q);
      BehaviourOutput out;
      out.joint_weight = 0.5;
      behaviour.update(params, fixture.context(), out);
      const double r = radius(fixture);
      double expected = 0.0;
      if (r > r_max) {
        expected = 3.0 * (r - r_max);
        ++outer;
      } else if (r < r_min) {
        expected = 3.0 * (r_min - r);
        ++inner;
      }
      EXPECT_NEAR(out.joint_weight, 0.5 + expected, 1e-15) << r;
      EXPECT_EQ(out.velocity, MotionVector::Zero());
      EXPECT_EQ(out.force, MotionVector::Zero());
    }
    EXPECT_GT(inner, 10);
    EXPECT_GT(outer, 10);
  }
}

// iiwa at q = 0 is fully stretched (straight up): the composite Jacobian loses rank (no
// motion along the arm, ψ undefined). The plain solve refuses; with the robustness weight
// the solve is bounded, and outside the region the weight is zero so nothing changes.
TEST(SingularityRobustness, KeepsTheResolverBoundedAtTheStretchedArm) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = params_with(0.2, 0.9, 1.0);
  SingularityRobustness behaviour;
  MotionVector xdot;
  xdot << 0.05, -0.02, 0.1, 0.1, 0.0, -0.1, 0.2;  // includes motion along the arm
  const MotionVector weights = MotionVector::Ones();

  fixture.set(JointVector::Zero());
  ASSERT_GT(radius(fixture), 0.95);
  JointVector qdot;
  EXPECT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), weights, JointVector::Zero(), xdot, qdot),
            DlsStatus::kSingular);
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  EXPECT_NEAR(out.joint_weight, radius(fixture) - 0.9, 1e-15);
  EXPECT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), weights,
                                     JointVector::Constant(out.joint_weight), xdot, qdot),
            DlsStatus::kOk);
  EXPECT_LE(qdot.norm(), 2.0);

  // Approaching the stretch: the plain solution grows without bound, the weighted one not.
  double plain_largest = 0.0, weighted_largest = 0.0;
  for (const double bend : {0.1, 0.01, 1e-3, 1e-4}) {
    JointVector q = JointVector::Zero();
    q[1] = 0.2;
    q[3] = bend;
    fixture.set(q);
    BehaviourOutput bent;
    behaviour.update(params, fixture.context(), bent);
    ASSERT_GT(bent.joint_weight, 0.0);
    if (weighted_dls<kMotionDim>(fixture.jacobian(), weights, JointVector::Zero(), xdot, qdot) ==
        DlsStatus::kOk) {
      plain_largest = std::max(plain_largest, qdot.norm());
    } else {
      plain_largest = std::numeric_limits<double>::infinity();
    }
    ASSERT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), weights,
                                       JointVector::Constant(bent.joint_weight), xdot, qdot),
              DlsStatus::kOk);
    weighted_largest = std::max(weighted_largest, qdot.norm());
  }
  EXPECT_GT(plain_largest, 100.0);
  EXPECT_LE(weighted_largest, 2.0);
}

TEST(SingularityRobustness, DisabledAddsNoWeight) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = params_with(0.2, 0.5, 1.0);
  params.enabled = false;
  SingularityRobustness behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  EXPECT_EQ(out.joint_weight, 0.0);
}

}  // namespace
}  // namespace tether::remote
