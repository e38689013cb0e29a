#include "tether/proto/convert.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tether/common/spatial.h"

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

}  // namespace
}  // namespace tether::proto
