#include "tether/proto/convert.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "tether/common/spatial.h"
#include "tether/proto/task_io.h"
#include "tether/v1/remote_site.pb.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {
namespace {

template <typename Message>
Message parse_text(const std::string& text) {
  Message m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConversionError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ProtoConvert, PoseRoundTripsThroughAQuaternion) {
  const Frame frame{so3_exp(Vector3(0.3, -1.2, 2.5)), Vector3(0.1, -0.2, 0.3)};
  v1::Pose pose;
  from_frame(frame, &pose);
  const Frame back = to_frame(pose, "pose");
  EXPECT_LE((back.R - frame.R).norm(), 1e-12);
  EXPECT_LE((back.p - frame.p).norm(), 1e-15);
}

TEST(ProtoConvert, ReadsAPoseWrittenAsTextWithRollPitchYawInDegrees) {
  const auto pose = parse_text<v1::Pose>(
      "position { x: 0.5 z: 1.0 } rotation { rpy { roll_deg: 90 yaw_deg: 180 } }");
  const Frame f = to_frame(pose, "task.motion_frame");
  const Matrix3 expected =
      (Eigen::AngleAxisd(M_PI, Vector3::UnitZ()) * Eigen::AngleAxisd(M_PI / 2, Vector3::UnitX()))
          .toRotationMatrix();
  EXPECT_LE((f.R - expected).norm(), 1e-12);
  EXPECT_EQ(f.p, Vector3(0.5, 0.0, 1.0));
}

TEST(ProtoConvert, ReadsAPoseWrittenAsJson) {
  v1::Pose pose;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(
          R"({"position": {"y": 2}, "rotation": {"matrix": {"rows": [0,-1,0, 1,0,0, 0,0,1]}}})",
          &pose)
          .ok());
  const Frame f = to_frame(pose, "pose");
  EXPECT_LE((f.R - so3_exp(Vector3(0, 0, M_PI / 2))).norm(), 1e-12);
}

TEST(ProtoConvert, AbsentRotationIsTheIdentity) {
  const Frame f = to_frame(parse_text<v1::Pose>("position { x: 1 }"), "pose");
  EXPECT_EQ(f.R, Matrix3::Identity());
}

TEST(ProtoConvert, RejectsANonUnitQuaternionNamingFieldAndNorm) {
  const auto pose = parse_text<v1::Pose>("rotation { quaternion { w: 0.5 } }");
  EXPECT_EQ(error_of([&] { to_frame(pose, "task.motion_frame"); }),
            "task.motion_frame.rotation.quaternion: norm 0.5, a rotation needs a unit quaternion "
            "(norm 1 ± 1e-6)");
}

TEST(ProtoConvert, RejectsAMatrixThatIsNotARotation) {
  const auto mirror =
      parse_text<v1::Pose>("rotation { matrix { rows: [1, 0, 0, 0, 1, 0, 0, 0, -1] } }");
  const std::string message = error_of([&] { to_frame(mirror, "frames.teleop"); });
  EXPECT_NE(message.find("frames.teleop.rotation.matrix.rows: not a rotation"), std::string::npos)
      << message;
  EXPECT_NE(message.find("det = -1"), std::string::npos) << message;

  const auto short_matrix = parse_text<v1::Pose>("rotation { matrix { rows: [1, 0, 0] } }");
  EXPECT_EQ(error_of([&] { to_frame(short_matrix, "f"); }),
            "f.rotation.matrix.rows: 3 values, a 3x3 rotation needs 9 (row-major)");
}

TEST(ProtoConvert, RejectsNonFiniteNumbersNamingTheComponent) {
  v1::Wrench wrench;
  wrench.mutable_torque()->set_y(std::numeric_limits<double>::infinity());
  EXPECT_EQ(error_of([&] { to_wrench(wrench, "force_control.reference"); }),
            "force_control.reference.torque.y = inf: must be finite");
}

TEST(ProtoConvert, ASceneRoundTripsAndBadGeometryOrTagsAreRefusedNamingTheField) {
  SceneDescription scene;
  scene.name = "door";
  SceneBody panel;
  panel.name = "door_panel";
  panel.size = Vector3(0.015, 0.325, 0.45);
  panel.pose.p = Vector3(1.0, -0.2, 0.13);
  panel.joint = "door_hinge";
  scene.bodies.push_back(panel);
  SceneBody target;
  target.name = "visual_target";
  target.size = Vector3(0.05, 0.05, 0.001);
  target.tag = SceneTag{42, 0.1};
  scene.bodies.push_back(target);
  SceneJoint hinge;
  hinge.name = "door_hinge";
  hinge.position = Vector3(1.0, -0.55, 0.18);
  hinge.lower = -0.1;
  hinge.upper = 1.7;
  hinge.aux_index = 0;
  scene.joints.push_back(hinge);
  SceneCamera left;
  left.name = "stereo_left";
  left.mount = "camera_mount";
  left.pose.p = Vector3(0.1, -0.6, 0.5);
  left.frame_rate = 15.0;
  left.stereo_partner = "stereo_right";
  scene.cameras.push_back(left);
  v1::SceneDescription wire;
  from_scene(scene, &wire);
  EXPECT_EQ(to_scene(wire, "scene"), scene);
  EXPECT_FALSE(wire.bodies(0).has_tag());  // a body without a tag says nothing of one
  EXPECT_EQ(wire.bodies(1).tag().id(), 42);

  const auto refusal = [](const v1::SceneDescription& bad) {
    try {
      to_scene(bad, "scene");
    } catch (const ConversionError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // A direction with huge components is still a direction (its plain norm would overflow).
  v1::SceneDescription huge = wire;
  huge.mutable_joints(0)->mutable_axis()->set_z(1e200);
  EXPECT_NEAR(to_scene(huge, "scene").joints[0].axis.z(), 1.0, 1e-12);
  v1::SceneDescription bad = wire;
  bad.mutable_joints(0)->mutable_axis()->set_z(0.0);
  EXPECT_NE(refusal(bad).find("scene.joints[0].axis"), std::string::npos) << refusal(bad);
  bad = wire;
  bad.mutable_bodies(0)->mutable_size()->set_y(0.0);
  EXPECT_NE(refusal(bad).find("scene.bodies[0].size"), std::string::npos) << refusal(bad);
  bad = wire;
  bad.mutable_bodies(1)->mutable_tag()->set_id(587);
  EXPECT_EQ(refusal(bad), "scene.bodies[1].tag.id = 587: must be in [0, 586] (tag36h11)");
  bad = wire;
  bad.mutable_bodies(1)->mutable_tag()->set_size(0.0);
  EXPECT_EQ(refusal(bad), "scene.bodies[1].tag.size = 0: must be in (0, 2] m");
  bad = wire;
  bad.mutable_joints(0)->set_lower(2.0);
  EXPECT_NE(refusal(bad).find("scene.joints[0].lower = 2"), std::string::npos) << refusal(bad);
  bad = wire;
  bad.mutable_cameras(0)->set_width(641);
  EXPECT_EQ(refusal(bad), "scene.cameras[0].width = 641: must be even and in [16, 4096] px");
  bad = wire;
  bad.mutable_cameras(0)->set_frame_rate(0.0);
  EXPECT_NE(refusal(bad).find("scene.cameras[0].frame_rate = 0"), std::string::npos)
      << refusal(bad);
}

TEST(ProtoConvert, JointVectorsMustHaveSevenValues) {
  v1::JointVector q;
  q.add_values(0.1);
  EXPECT_EQ(error_of([&] { to_joint_vector(q, "start"); }),
            "start.values: 1 values, the arm has 7 joints");
  from_joint_vector(JointVector::LinSpaced(-1, 1), &q);
  EXPECT_EQ(to_joint_vector(q, "start"), JointVector::LinSpaced(-1, 1));
}

TEST(ProtoConvert, MotionVectorsKeepTheirRowOrder) {
  MotionVector m;
  m << 1, 2, 3, 4, 5, 6, 7;
  v1::MotionVector msg;
  from_motion_vector(m, &msg);
  EXPECT_EQ(msg.rotation().x(), 4);
  EXPECT_EQ(msg.arm_angle(), 7);
  EXPECT_EQ(to_motion_vector(msg, "m"), m);
}

TEST(ProtoConvert, ReportsKeepNonFiniteValuesWhenAsked) {
  v1::Wrench wrench;
  wrench.mutable_force()->set_z(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(to_wrench(wrench, "wrench", NonFinite::kKeep)[2]));
  EXPECT_EQ(error_of([&] { to_wrench(wrench, "wrench"); }), "wrench.force.z = nan: must be finite");

  v1::MotionVector m;
  m.set_arm_angle(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(to_motion_vector(m, "error", NonFinite::kKeep)[6],
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(error_of([&] { to_motion_vector(m, "error"); }),
            "error.arm_angle = -inf: must be finite");

  v1::JointVector q;
  from_joint_vector(JointVector::Zero(), &q);
  q.set_values(3, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(to_joint_vector(q, "q", NonFinite::kKeep)[3]));
  EXPECT_EQ(error_of([&] { to_joint_vector(q, "q"); }), "q.values[3] = nan: must be finite");
  EXPECT_EQ(error_of([&] { to_twist(v1::Twist{}, "t"); }), "no error");
}

// Every value of a tether.v1 enum from 0 to `max`.
template <typename Wire>
std::vector<Wire> wire_values(Wire max) {
  std::vector<Wire> all;
  for (int i = 0; i <= max; ++i) all.push_back(static_cast<Wire>(i));
  return all;
}

// Domain -> wire -> domain for every domain enumerator up to `last`, and wire -> domain ->
// wire for every value of the schema: each pair is named once in each direction, and no two
// enumerators share a wire value.
template <typename Domain, typename Wire>
void expect_round_trips(Domain last, Wire wire_max, Domain (*to)(Wire, const std::string&),
                        Wire (*from)(Domain), const char* what) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    const auto d = static_cast<Domain>(i);
    EXPECT_EQ(to(from(d), "f"), d) << what << " " << to_string(d);
  }
  for (Wire w : wire_values(wire_max)) {
    EXPECT_EQ(from(to(w, "f")), w) << what << " " << static_cast<int>(w);
  }
  // As many enumerators on both sides (with the ones above: a bijection).
  EXPECT_EQ(static_cast<int>(last), static_cast<int>(wire_max)) << what;
}

TEST(ProtoConvert, SharedEnumsRoundTripEveryValue) {
  expect_round_trips(ExecutorState::kRecovering, v1::ExecutorState_MAX, &to_executor_state,
                     &from_executor_state, "ExecutorState");
  expect_round_trips(BreachCause::kInvalidIncrement, v1::BreachCause_MAX, &to_breach_cause,
                     &from_breach_cause, "BreachCause");
  expect_round_trips(static_cast<Behaviour>(kBehaviourCount), v1::Behaviour_MAX, &to_behaviour,
                     &from_behaviour, "Behaviour");
  // ResolverKind has no unspecified enumerator: RESOLVER_KIND_UNSPECIFIED reads as DLS.
  for (ResolverKind k : {ResolverKind::kDls, ResolverKind::kConfigurationControl,
                         ResolverKind::kConstrainedOptimisation, ResolverKind::kShake}) {
    EXPECT_EQ(to_resolver_kind(from_resolver_kind(k), "f"), k) << to_string(k);
  }
  EXPECT_EQ(to_resolver_kind(v1::RESOLVER_KIND_UNSPECIFIED, "f"), ResolverKind::kDls);
}

TEST(ProtoConvert, SharedEnumsPairTheSameNames) {
  EXPECT_EQ(from_executor_state(ExecutorState::kStopping), v1::EXECUTOR_STATE_STOPPING);
  EXPECT_EQ(to_executor_state(v1::EXECUTOR_STATE_UNSPECIFIED, "state"),
            ExecutorState::kUnspecified);
  EXPECT_EQ(from_breach_cause(BreachCause::kTeleoperationStalled),
            v1::BREACH_CAUSE_TELEOPERATION_STALLED);
  EXPECT_EQ(to_breach_cause(v1::BREACH_CAUSE_ARM_ANGLE_DEVIATION, "cause"),
            BreachCause::kArmAngleDeviation);
  EXPECT_EQ(from_behaviour(Behaviour::kJointLimitAvoidance), v1::BEHAVIOUR_JOINT_LIMIT_AVOIDANCE);
  EXPECT_EQ(to_behaviour(v1::BEHAVIOUR_SPRING_TRAJECTORY, "b"), Behaviour::kSpringTrajectory);
}

TEST(ProtoConvert, RefusesAnEnumValueFromANewerSchemaNamingFieldAndValue) {
  const auto expected = [](const std::string& field_and_value, int max) {
    return field_and_value + ": unknown value (this build knows 0.." + std::to_string(max) +
           "; is the other site newer?)";
  };
  EXPECT_EQ(error_of([] { to_breach_cause(static_cast<v1::BreachCause>(99), "breach.cause"); }),
            expected("breach.cause = 99", v1::BreachCause_MAX));
  EXPECT_EQ(error_of([] { to_executor_state(static_cast<v1::ExecutorState>(-1), "state"); }),
            expected("state = -1", v1::ExecutorState_MAX));
  const auto next = static_cast<v1::Behaviour>(v1::Behaviour_MAX + 1);
  EXPECT_EQ(error_of([&] { to_behaviour(next, "behaviours"); }),
            expected("behaviours = " + std::to_string(v1::Behaviour_MAX + 1), v1::Behaviour_MAX));
}

TEST(ProtoConvert, TeleoperationCountersRoundTripWithTheStreamsOwnSequenceNumbers) {
  remote::TeleoperationCounters c;
  c.applied = 1200;
  c.lost = 3;
  c.duplicates = 2;
  c.discarded = 40;
  c.stale = 5;
  c.last_sequence = 7005;  // the site's numbering: this stream started after 7000
  c.enabled = true;
  c.ended = true;
  c.stall_bound = 0.35;
  c.playout_delay = 0.012;
  v1::TeleoperationCounters wire;
  from_teleoperation_counters(c, 7000, &wire);
  EXPECT_EQ(wire.last_sequence(), 5u);
  const remote::TeleoperationCounters back = to_teleoperation_counters(wire);
  remote::TeleoperationCounters expected = c;
  expected.last_sequence = 5;
  EXPECT_EQ(back, expected);
  // An increment of an earlier stream is none of this stream's: reported as 0.
  from_teleoperation_counters(c, 8000, &wire);
  EXPECT_EQ(wire.last_sequence(), 0u);
}

}  // namespace
}  // namespace tether::proto
