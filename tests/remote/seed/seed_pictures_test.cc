// The runs behind the two seed pictures that have no scenario test of their own: the
// constrained-optimisation patent's guidance into the joint limits and the
// spheres-of-influence patent's pass. Each asserts what the picture claims and writes it into
// the working directory.

#include "tether/remote/seed/seed_pictures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "tether/common/urdf_loader.h"
#include "tether/remote/seed/constrained_optimisation_guidance.h"
#include "tether/remote/seed/sphere_pass.h"

namespace tether::remote::seed {
namespace {

TEST(SeedPictures, GuidanceIntoTheLimitsStopsAJointAtItsLimitWhilePFallsFromOneToZero) {
  const GuidanceRun run = run_guidance_into_limits(load_default_arm());
  std::printf(
      "guidance: p %.3f (first 0.1 s) -> %.4f, joint %d nearest its limit, worst excess "
      "%.3g rad, %d infeasible, %d non-finite\n",
      run.early_p, run.p.back(), run.limit_joint + 1, run.worst_limit_excess, run.infeasible,
      run.non_finite);
  EXPECT_EQ(run.non_finite, 0);
  EXPECT_NEAR(run.early_p, 1.0, 1e-9);  // free motion: the whole shift
  EXPECT_LT(run.p.back(), 0.05);        // into the limit: almost nothing
  ASSERT_GE(run.limit_joint, 0);
  const int j = run.limit_joint;
  const double final_margin =
      std::min(run.q.back()[j] - run.lower[j], run.upper[j] - run.q.back()[j]);
  EXPECT_LT(final_margin, 1e-3);            // the joint sits on its limit ...
  EXPECT_LE(run.worst_limit_excess, 1e-9);  // ... and no joint ever went beyond one
  write_guidance_picture(run, "constrained_optimisation_guidance.png");
}

TEST(SeedPictures, SpherePassHoldsEveryLinkOutsideTheSpheresOfInfluence) {
  const SpherePassRun run = run_sphere_pass(load_default_arm());
  ASSERT_TRUE(run.completed) << run.breach;
  ASSERT_FALSE(run.obstacles.empty());
  const double influence = run.obstacles.front().influence;
  std::printf("sphere pass: least critical distance per link [mm]");
  for (int k = 0; k < kArmDof; ++k) std::printf(" %.1f", run.least[k] * 1e3);
  std::printf(", influence %.1f mm, tracking error %.1f mm\n", influence * 1e3,
              run.tracking_error * 1e3);
  for (int k = 0; k < kArmDof; ++k) {
    EXPECT_GE(run.least[k], influence - 1e-3) << "link " << k + 1;
  }
  // Some link did reach its sphere of influence: the constraint, not luck, kept it out.
  EXPECT_LT(run.least.minCoeff(), influence + 5e-3);
  write_sphere_pass_picture(run, "spheres_of_influence_pass.png");
}

TEST(SeedPictures, ListNamesEveryPictureOnceAsAPng) {
  const auto list = seed_picture_list();
  EXPECT_EQ(list.size(), 9u);
  for (std::size_t i = 0; i < list.size(); ++i) {
    EXPECT_TRUE(list[i].file.ends_with(".png")) << list[i].file;
    EXPECT_FALSE(list[i].seed.empty());
    for (std::size_t k = 0; k < i; ++k) EXPECT_NE(list[i].file, list[k].file);
  }
}

}  // namespace
}  // namespace tether::remote::seed
