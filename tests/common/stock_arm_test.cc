// Arms as their makers publish them: the Kinova Gen3 7-DOF URDF unchanged, completed by
// Kinova's MoveIt joint_limits.yaml and tether's arm profile; automatic shoulder, elbow and
// wrist points; errors that name the joint and the file that could supply what is missing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <kdl/chainfksolverpos_recursive.hpp>
#include <kdl/chainjnttojacsolver.hpp>
#include <numbers>
#include <regex>

#include "kdl_chain.h"
#include "test_arms.h"
#include "tether/cli/options.h"
#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"

namespace tether {
namespace {

using testing::kdl_chain_from_urdf;

const std::string kGen3Base = "base_link";
const std::string kGen3Tool = "end_effector_link";

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// This process's temporary directory, removed at exit (each test runs in its own process
// under CTest, so parallel runs do not share it).
struct TempDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("tether_stock_arm_test_" + std::to_string(::getpid()));
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
const TempDir kTempDir;

// A file in the test's temporary directory.
std::string write_temp(const std::string& name, const std::string& text) {
  const auto& dir = kTempDir.path;
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

UrdfLoadOptions gen3_options(bool limits = true, bool profile = true) {
  UrdfLoadOptions o;
  o.base_link = kGen3Base;
  o.tool_link = kGen3Tool;
  if (limits) o.joint_limits_file = data_path("arms/gen3_joint_limits.yaml");
  if (profile) o.arm_profile_file = data_path("arms/gen3_profile.yaml");
  return o;
}

std::string error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const ArmModelError& e) {
    return e.what();
  }
  return "no error";
}

void expect_contains(const std::string& message, const std::vector<std::string>& pieces) {
  for (const auto& piece : pieces) {
    EXPECT_NE(message.find(piece), std::string::npos)
        << "missing '" << piece << "' in: " << message;
  }
}

KDL::JntArray to_kdl(const JointVector& q) {
  KDL::JntArray out(kArmDof);
  for (int i = 0; i < kArmDof; ++i) out(static_cast<unsigned>(i)) = q[i];
  return out;
}

TEST(StockArm, Gen3LoadsAsPublishedWithKinovasLimitsAndTheProfilesRanges) {
  const LoadedArm loaded = load_arm_with_report(data_path("arms/gen3.urdf"), gen3_options());
  const ArmModel& arm = loaded.arm;
  ASSERT_EQ(arm.dof(), 7);
  EXPECT_EQ(arm.name, "GEN3-7DOF-NOVISION_FOR_URDF_ARM_V12");
  // Continuous joints 1, 3, 5, 7 take the profile's ±2π; revolute ones keep the URDF's.
  for (int k : {0, 2, 4, 6}) {
    EXPECT_DOUBLE_EQ(arm.joints[k].limits.lower, -2 * std::numbers::pi);
    EXPECT_DOUBLE_EQ(arm.joints[k].limits.upper, 2 * std::numbers::pi);
    EXPECT_EQ(loaded.report.joints[k].position, "arm profile");
  }
  EXPECT_DOUBLE_EQ(arm.joints[1].limits.upper, 2.24);
  EXPECT_EQ(loaded.report.joints[1].position, "urdf");
  // Kinova's hard_joint_limits.yaml: 1.33 rad/s, 4.94 rad/s² (large), 1.16, 9.5 (small).
  EXPECT_DOUBLE_EQ(arm.joints[2].limits.velocity, 1.33);
  EXPECT_DOUBLE_EQ(arm.joints[2].limits.acceleration, 4.94);
  EXPECT_DOUBLE_EQ(arm.joints[6].limits.velocity, 1.16);
  EXPECT_DOUBLE_EQ(arm.joints[6].limits.acceleration, 9.5);
  EXPECT_EQ(loaded.report.joints[6].acceleration, "joint_limits.yaml");
  EXPECT_DOUBLE_EQ(arm.joints[0].limits.effort, 39.0);
  // package:// meshes nowhere to be found: reported, not fatal.
  EXPECT_EQ(loaded.report.meshes, 16);
  EXPECT_EQ(loaded.report.package_meshes, 16);
  EXPECT_EQ(loaded.report.resolved_meshes, 0);
  ASSERT_EQ(loaded.report.notes.size(), 1u);
  EXPECT_NE(loaded.report.notes[0].find("not needed for kinematics"), std::string::npos);
  // By name, the same.
  EXPECT_EQ(load_gen3_arm().joints[6].limits.acceleration, 9.5);
}

TEST(StockArm, Gen3ForwardKinematicsMatchesKdlForEveryJointFrameAndTool) {
  const KinematicModel model(load_gen3_arm());
  const KDL::Chain chain = kdl_chain_from_urdf(data_path("arms/gen3.urdf"), kGen3Base, kGen3Tool);
  KDL::ChainFkSolverPos_recursive kdl_fk(chain);
  KinematicState state;
  double worst = 0.0;
  for (const JointVector& q : testing::random_configurations(model, 1000, 20261125)) {
    forward_kinematics(model, q, state);
    const KDL::JntArray kq = to_kdl(q);
    KDL::Frame tool;
    ASSERT_GE(kdl_fk.JntToCart(kq, tool), 0);
    const Frame expected_tool = testing::to_frame(tool);
    worst = std::max(worst, (state.tool.p - expected_tool.p).cwiseAbs().maxCoeff());
    worst = std::max(worst, (state.tool.R - expected_tool.R).cwiseAbs().maxCoeff());
    int joint = 0;
    for (unsigned s = 0; s < chain.getNrOfSegments() && joint < kArmDof; ++s) {
      if (chain.getSegment(s).getJoint().getName() !=
          model.arm().joints[static_cast<std::size_t>(joint)].name)
        continue;
      KDL::Frame segment;
      ASSERT_GE(kdl_fk.JntToCart(kq, segment, static_cast<int>(s) + 1), 0);
      const Frame expected = testing::to_frame(segment);
      const Frame actual = state.joint_frame(model, joint);
      worst = std::max(worst, (actual.p - expected.p).cwiseAbs().maxCoeff());
      worst = std::max(worst, (actual.R - expected.R).cwiseAbs().maxCoeff());
      ++joint;
    }
    ASSERT_EQ(joint, kArmDof);
  }
  EXPECT_LE(worst, 1e-9);
  std::cout << "[ figures  ] gen3 FK vs KDL over 1000 configurations: worst |difference| " << worst
            << " (m, rotation-matrix entries)\n";
}

TEST(StockArm, Gen3ToolJacobianMatchesKdl) {
  const KinematicModel model(load_gen3_arm());
  const KDL::Chain chain = kdl_chain_from_urdf(data_path("arms/gen3.urdf"), kGen3Base, kGen3Tool);
  KDL::ChainJntToJacSolver kdl_jac(chain);
  KinematicState state;
  Jacobian6 J;
  KDL::Jacobian expected(kArmDof);
  double worst = 0.0;
  for (const JointVector& q : testing::random_configurations(model, 1000, 7)) {
    forward_kinematics(model, q, state);
    tool_jacobian(state, J);
    ASSERT_GE(kdl_jac.JntToJac(to_kdl(q), expected), 0);
    for (int r = 0; r < 6; ++r) {
      for (int c = 0; c < kArmDof; ++c) {
        worst = std::max(worst, std::abs(J(r, c) - expected(static_cast<unsigned>(r),
                                                            static_cast<unsigned>(c))));
      }
    }
  }
  EXPECT_LE(worst, 1e-9);
  std::cout << "[ figures  ] gen3 tool Jacobian vs KDL over 1000 configurations: worst " << worst
            << "\n";
}

// The joint axes at q = 0 as KDL sees them: a point on each axis and its direction, in base
// coordinates, from the URDF through KDL alone.
struct Axis {
  Vector3 point, direction;
};
std::vector<Axis> kdl_axes(const std::string& urdf, const std::string& base,
                           const std::string& tool) {
  const KDL::Chain chain = kdl_chain_from_urdf(urdf, base, tool);
  KDL::ChainFkSolverPos_recursive fk(chain);
  const KDL::JntArray q(chain.getNrOfJoints());
  std::vector<Axis> out;
  for (unsigned s = 0; s < chain.getNrOfSegments(); ++s) {
    const KDL::Joint& joint = chain.getSegment(s).getJoint();
    if (joint.getType() == KDL::Joint::None) continue;
    KDL::Frame before;
    fk.JntToCart(q, before, static_cast<int>(s));
    const KDL::Vector p = before * joint.JointOrigin();
    const KDL::Vector a = before.M * joint.JointAxis();
    out.push_back({Vector3(p.x(), p.y(), p.z()), Vector3(a.x(), a.y(), a.z()).normalized()});
  }
  return out;
}

double distance(const Axis& axis, const Vector3& x) {
  const Vector3 r = x - axis.point;
  return (r - r.dot(axis.direction) * axis.direction).norm();
}

TEST(StockArm, Gen3PointsAreFoundWhereConsecutiveAxesMeetWithTheirResidualsReported) {
  const LoadedArm loaded = load_arm_with_report(data_path("arms/gen3.urdf"), gen3_options());
  const std::vector<Axis> axes = kdl_axes(data_path("arms/gen3.urdf"), kGen3Base, kGen3Tool);
  ASSERT_EQ(axes.size(), 7u);
  const KinematicModel model(loaded.arm);
  KinematicState state;
  forward_kinematics(model, JointVector::Zero(), state);
  const struct {
    const char* name;
    const ArmPointReport& report;
    const Vector3& point;
    int first;
  } points[] = {{"shoulder", loaded.report.shoulder, state.shoulder, 0},
                {"elbow", loaded.report.elbow, state.elbow, 2},
                {"wrist", loaded.report.wrist, state.wrist, 4}};
  for (const auto& p : points) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.report.source, ArmPointReport::Source::kAutomatic);
    EXPECT_EQ(p.report.point.joint, p.first + 1);  // carried by joint 2, 4, 6, as markers are
    // On both axes (Kinova's axes meet exactly), with the residual the report gives.
    EXPECT_LE(distance(axes[p.first], p.point), 1e-9);
    EXPECT_LE(distance(axes[p.first + 1], p.point), 1e-9);
    EXPECT_LE(p.report.residual, 1e-9);
    // The next axis misses the point: the Gen3 is not exactly S-R-S, and the report says by
    // how much.
    EXPECT_NEAR(p.report.next_axis_distance, distance(axes[p.first + 2], p.point), 1e-12);
    std::cout << "[ figures  ] gen3 " << p.name << ": residual " << p.report.residual * 1e3
              << " mm, " << p.report.next_axis_distance * 1e3 << " mm off the axis of joint "
              << p.first + 3 << "\n";
  }
  EXPECT_NEAR(loaded.report.shoulder.next_axis_distance, 0.011750, 1e-5);
  EXPECT_NEAR(loaded.report.wrist.next_axis_distance, 0.00035, 1e-5);
  const std::string text = format_load_report(loaded);
  expect_contains(text, {"shoulder: automatic, where the axes of joints 1 (joint_1) and 2 "
                         "(joint_2) meet; 0.000 mm off the axes of joints 1 and 2, 11.75"});
}

// The shipped iiwa7 and panda without their marker links.
std::string without_markers(const std::string& xml) {
  std::string out = std::regex_replace(xml, std::regex("<link name=\"tether_[a-z]+\"/>"), "");
  return std::regex_replace(
      out, std::regex("<joint name=\"tether_[a-z]+_mount\"[\\s\\S]*?</joint>"), "");
}

void expect_same_point(const ArmPoint& automatic, const ArmPoint& marker) {
  EXPECT_EQ(automatic.joint, marker.joint);
  EXPECT_LE((automatic.offset - marker.offset).norm(), 1e-12)
      << automatic.offset.transpose() << " vs " << marker.offset.transpose();
  std::cout << "[ figures  ] automatic vs marker point: joint " << automatic.joint << " vs "
            << marker.joint << ", |offset difference| " << (automatic.offset - marker.offset).norm()
            << " m\n";
}

TEST(StockArm, AutomaticPointsReproduceTheIiwasMarkerLinksExactly) {
  const testing::ShippedArm iiwa = testing::shipped_arms()[0];
  const ArmModel marked = testing::load(iiwa);
  UrdfLoadOptions options;
  options.base_link = iiwa.base;
  options.tool_link = iiwa.tool;
  const LoadedArm automatic =
      load_arm_with_report_from_string(without_markers(read(iiwa.urdf)), "iiwa7.urdf", options);
  expect_same_point(automatic.arm.shoulder, marked.shoulder);
  expect_same_point(automatic.arm.elbow, marked.elbow);
  expect_same_point(automatic.arm.wrist, marked.wrist);
  for (const ArmPointReport* r :
       {&automatic.report.shoulder, &automatic.report.elbow, &automatic.report.wrist}) {
    EXPECT_EQ(r->source, ArmPointReport::Source::kAutomatic);
    EXPECT_LE(r->residual, 1e-12);
    EXPECT_LE(r->next_axis_distance, 1e-12);
  }
}

TEST(StockArm, PandasElbowOffsetIsRefusedAtOneMillimetreAndReproducesTheMarkerBeyond) {
  const testing::ShippedArm panda = testing::shipped_arms()[1];
  const ArmModel marked = testing::load(panda);
  UrdfLoadOptions options;
  options.base_link = panda.base;
  options.tool_link = panda.tool;
  const std::string xml = without_markers(read(panda.urdf));
  expect_contains(error_of([&] { load_arm_from_urdf_string(xml, "panda.urdf", options); }),
                  {"panda.urdf: elbow point: the axes of joints 3 ('panda_joint3') and 4 "
                   "('panda_joint4') pass 82.5 mm apart at q = 0, more than the 1 mm tolerance",
                   "points.elbow", "--arm-profile", "tether_elbow"});
  options.point_tolerance = 0.09;
  const LoadedArm automatic = load_arm_with_report_from_string(xml, "panda.urdf", options);
  expect_same_point(automatic.arm.shoulder, marked.shoulder);
  expect_same_point(automatic.arm.elbow, marked.elbow);
  expect_same_point(automatic.arm.wrist, marked.wrist);
  EXPECT_NEAR(automatic.report.shoulder.residual, 0.0, 1e-12);
  EXPECT_NEAR(automatic.report.elbow.residual, 0.0825, 1e-12);
  EXPECT_NEAR(automatic.report.wrist.residual, 0.0, 1e-12);
  EXPECT_NEAR(automatic.report.wrist.next_axis_distance, 0.088, 1e-12);
  // With the markers, the report gives the same residuals for the same points.
  UrdfLoadOptions marked_options = options;
  marked_options.point_tolerance = 1e-3;
  const LoadedArm with_markers = load_arm_with_report(panda.urdf, marked_options);
  EXPECT_EQ(with_markers.report.elbow.source, ArmPointReport::Source::kMarkerLink);
  EXPECT_NEAR(with_markers.report.elbow.residual, 0.0825, 1e-12);
}

TEST(StockArm, ProfilePointsWinOverMarkersAndAutomaticPoints) {
  const std::string profile = write_temp("points.yaml",
                                         "tether_arm_profile: 1\n"
                                         "points:\n"
                                         "  elbow: {link: iiwa_link_4, xyz: [0, 0.01, 0]}\n");
  UrdfLoadOptions options;
  options.base_link = "iiwa_link_0";
  options.tool_link = "iiwa_flange";
  options.arm_profile_file = profile;
  const LoadedArm loaded = load_arm_with_report(data_path("arms/iiwa7.urdf"), options);
  EXPECT_EQ(loaded.report.elbow.source, ArmPointReport::Source::kProfile);
  EXPECT_EQ(loaded.arm.elbow.joint, 3);
  EXPECT_LE((loaded.arm.elbow.offset - Vector3(0, 0.01, 0)).norm(), 1e-15);
  EXPECT_NEAR(loaded.report.elbow.residual, 0.01, 1e-12);
  EXPECT_EQ(loaded.report.shoulder.source, ArmPointReport::Source::kMarkerLink);

  const std::string bad = write_temp("bad_points.yaml",
                                     "tether_arm_profile: 1\n"
                                     "points:\n"
                                     "  wrist: {link: gripper}\n");
  options.arm_profile_file = bad;
  expect_contains(error_of([&] { load_arm_from_urdf(data_path("arms/iiwa7.urdf"), options); }),
                  {bad + ":3: points.wrist.link = 'gripper': no <link> of that name"});
}

TEST(StockArm, ContinuousJointsTakeTheYamlsRange) {
  const std::string limits =
      write_temp("continuous.yaml", read(data_path("arms/gen3_joint_limits.yaml")) +
                                        "  extra_is_not_a_joint_here: {}\n");
  // An unknown joint is refused; then the same file with ranges for the continuous joints.
  UrdfLoadOptions options = gen3_options(false, false);
  options.joint_limits_file = limits;
  expect_contains(error_of([&] { load_arm_from_urdf(data_path("arms/gen3.urdf"), options); }),
                  {limits + ":", "joint_limits.extra_is_not_a_joint_here: no joint named",
                   "its movable joints: joint_1"});
  std::string text = read(data_path("arms/gen3_joint_limits.yaml"));
  for (const char* j : {"joint_1", "joint_3", "joint_5", "joint_7"}) {
    text = std::regex_replace(text, std::regex(std::string("  ") + j + ":\n"),
                              std::string("  ") + j +
                                  ":\n    has_position_limits: true\n    min_position: -3\n"
                                  "    max_position: 3.5\n");
  }
  options.joint_limits_file = write_temp("ranges.yaml", text);
  const LoadedArm loaded = load_arm_with_report(data_path("arms/gen3.urdf"), options);
  for (int k : {0, 2, 4, 6}) {
    EXPECT_DOUBLE_EQ(loaded.arm.joints[k].limits.lower, -3.0);
    EXPECT_DOUBLE_EQ(loaded.arm.joints[k].limits.upper, 3.5);
    EXPECT_EQ(loaded.report.joints[k].position, "joint_limits.yaml");
  }
}

TEST(StockArm, AContinuousJointWithoutARangeNamesTheJointAndBothFiles) {
  const std::string limits = data_path("arms/gen3_joint_limits.yaml");
  const std::string message =
      error_of([&] { load_arm_from_urdf(data_path("arms/gen3.urdf"), gen3_options(true, false)); });
  expect_contains(message,
                  {"4 problems", "gen3.urdf:",
                   "joint \"joint_1\" is continuous and has no position "
                   "range [rad]: add has_position_limits: true, min_position and max_position to " +
                       limits +
                       " (--joint-limits) or lower and upper to a tether arm profile "
                       "(--arm-profile)",
                   "joint \"joint_7\" is continuous"});
}

TEST(StockArm, AMissingAccelerationNamesTheJointAndTheFilesThatCouldSupplyIt) {
  const std::string message =
      error_of([&] { load_arm_from_urdf(data_path("arms/gen3.urdf"), gen3_options(false, true)); });
  expect_contains(message, {"7 problems",
                            "joint \"joint_3\": no acceleration limit [rad/s^2]: add "
                            "has_acceleration_limits: true and max_acceleration to a MoveIt "
                            "joint_limits.yaml (--joint-limits), or acceleration to " +
                                data_path("arms/gen3_profile.yaml") + " (--arm-profile)"});
}

TEST(StockArm, TheProfilesAccelerationWinsOverTheYamlsAndTheUrdfsAttribute) {
  const std::string profile = write_temp(
      "accel.yaml", read(data_path("arms/gen3_profile.yaml")) + "  joint_2: {acceleration: 2}\n");
  UrdfLoadOptions options = gen3_options();
  options.arm_profile_file = profile;
  const LoadedArm loaded = load_arm_with_report(data_path("arms/gen3.urdf"), options);
  EXPECT_DOUBLE_EQ(loaded.arm.joints[1].limits.acceleration, 2.0);
  EXPECT_EQ(loaded.report.joints[1].acceleration, "arm profile");
  EXPECT_DOUBLE_EQ(loaded.arm.joints[3].limits.acceleration, 4.94);

  // tether's own URDF attribute still counts, below both files.
  UrdfLoadOptions iiwa;
  iiwa.base_link = "iiwa_link_0";
  iiwa.tool_link = "iiwa_flange";
  iiwa.joint_limits_file =
      write_temp("iiwa.yaml",
                 "joint_limits:\n  iiwa_joint_7: {has_acceleration_limits: true, "
                 "max_acceleration: 7}\n");
  const ArmModel arm = load_arm_from_urdf(data_path("arms/iiwa7.urdf"), iiwa);
  EXPECT_DOUBLE_EQ(arm.joints[6].limits.acceleration, 7.0);
  EXPECT_DOUBLE_EQ(arm.joints[5].limits.acceleration, 15.0);
}

TEST(StockArm, ALimitsFileMayNarrowARevoluteRangeButNotWidenIt) {
  UrdfLoadOptions iiwa;
  iiwa.base_link = "iiwa_link_0";
  iiwa.tool_link = "iiwa_flange";
  iiwa.joint_limits_file = write_temp("narrow.yaml",
                                      "joint_limits:\n  iiwa_joint_2: {has_position_limits: true, "
                                      "min_position: -1, max_position: 1.5}\n");
  const ArmModel arm = load_arm_from_urdf(data_path("arms/iiwa7.urdf"), iiwa);
  EXPECT_DOUBLE_EQ(arm.joints[1].limits.lower, -1.0);
  EXPECT_DOUBLE_EQ(arm.joints[1].limits.upper, 1.5);
  iiwa.joint_limits_file = write_temp("wide.yaml",
                                      "joint_limits:\n  iiwa_joint_2: {has_position_limits: true, "
                                      "min_position: -3, max_position: 1.5}\n");
  expect_contains(
      error_of([&] { load_arm_from_urdf(data_path("arms/iiwa7.urdf"), iiwa); }),
      {iiwa.joint_limits_file + ":2: joint_limits.iiwa_joint_2.min_position, "
                                "joint_limits.iiwa_joint_2.max_position = -3, 1.5: must lie "
                                "within the URDF's range [-2.0944, 2.0944] rad"});
}

TEST(StockArm, PackageMeshesAreFoundInThePackagePathAndNeverNeeded) {
  const auto root = kTempDir.path / "ws";
  const auto meshes = root / "kortex_description/arms/gen3/7dof/meshes";
  std::filesystem::create_directories(meshes);
  std::ofstream(meshes / "base_link.STL") << "solid x\nendsolid x\n";
  UrdfLoadOptions options = gen3_options();
  options.package_paths = {"/nonexistent", root.string()};
  const LoadedArm loaded = load_arm_with_report(data_path("arms/gen3.urdf"), options);
  EXPECT_EQ(loaded.report.resolved_meshes, 2);  // base_link's visual and collision
  expect_contains(loaded.report.notes.at(0), {"14 of 16 package:// meshes not found"});
}

TEST(StockArm, TheCommandLineTakesTheFilesForAnyTool) {
  CLI::App app("test");
  cli::ArmOptions arm;
  cli::add_arm_options(app, arm);
  const std::string urdf = data_path("arms/gen3.urdf");
  std::vector<std::string> args = {"--arm",          urdf,
                                   "--base",         kGen3Base,
                                   "--tool",         kGen3Tool,
                                   "--joint-limits", data_path("arms/gen3_joint_limits.yaml"),
                                   "--arm-profile",  data_path("arms/gen3_profile.yaml"),
                                   "--package-path", "/a",
                                   "--package-path", "/b"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  EXPECT_EQ(arm.urdf.package_paths, (std::vector<std::string>{"/a", "/b"}));
  const LoadedArm loaded = arm.load_with_report();
  EXPECT_DOUBLE_EQ(loaded.arm.joints[0].limits.acceleration, 4.94);
  // The shipped name takes a replacement profile the same way.
  cli::ArmOptions by_name;
  by_name.name = "gen3";
  by_name.urdf.arm_profile_file = "/nonexistent/profile.yaml";
  EXPECT_EQ(error_of([&] { by_name.load(); }),
            "/nonexistent/profile.yaml: cannot open arm profile");
}

}  // namespace
}  // namespace tether
