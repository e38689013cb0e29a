#include "tether/remote/behaviours/proximity/proximity.h"

#include <gtest/gtest.h>

#include <cmath>

#include "context_fixture.h"
#include "tether/common/dls.h"
#include "tether/common/spatial.h"

namespace tether::remote {
namespace {

using testing::BehaviourContextFixture;

ProximityParameters velocity_params() {
  ProximityParameters params;
  params.enabled = true;
  params.reference_distance = 0.1;
  params.distance_gain = 2.0;
  params.tilt_gain = 3.0;
  return params;
}

ProximityReading reading(double distance, const Vector3& normal) {
  ProximityReading r;
  r.valid = true;
  r.distance = distance;
  r.surface_normal = normal;
  return r;
}

MotionVector run(const ProximityParameters& params, BehaviourContextFixture& fixture,
                 const ProximityReading& r) {
  fixture.arm_state().proximity = r;
  Proximity behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  return out.velocity;
}

// Angle between L's z and the normal, accurate down to tiny angles.
double tilt(const Vector3& normal) { return std::atan2(normal.head<2>().norm(), normal.z()); }

TEST(Proximity, AtTheReferenceDistanceFacingTheSurfaceAddsNothing) {
  BehaviourContextFixture fixture(load_default_arm(),
                                  Frame{so3_exp(Vector3(0.3, 0.1, -0.2)), Vector3(0, 0, 0.1)});
  auto params = velocity_params();
  params.tool_T_sensor = Frame{so3_exp(Vector3(-0.2, 0.4, 0.0)), Vector3(0.05, 0.0, 0.03)};
  EXPECT_EQ(run(params, fixture, reading(0.1, Vector3::UnitZ())), MotionVector::Zero());
}

TEST(Proximity, TooCloseBacksAwayAlongTheSensorZAndTooFarApproaches) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = velocity_params();  // L = MOTION = TOOL here
  MotionVector away = MotionVector::Zero();
  away[2] = 2.0 * (0.1 - 0.04);  // +z: from the surface towards the sensor
  EXPECT_LE((run(params, fixture, reading(0.04, Vector3::UnitZ())) - away).norm(), 1e-15);
  MotionVector closer = MotionVector::Zero();
  closer[2] = 2.0 * (0.1 - 0.25);
  EXPECT_LE((run(params, fixture, reading(0.25, Vector3::UnitZ())) - closer).norm(), 1e-15);
}

TEST(Proximity, TiltTurnsTheSensorZTowardsTheSurfaceNormal) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = velocity_params();
  const double dt = 1e-3;
  for (const double theta : {1e-6, 0.05, 0.4, 1.2, 2.5}) {
    const Vector3 axis = Vector3(1.0, -2.0, 0.0).normalized();
    const Vector3 normal = so3_exp(theta * axis) * Vector3::UnitZ();
    const MotionVector v = run(params, fixture, reading(0.1, normal));
    // ω = k_θ θ k with k the axis taking z onto the normal.
    EXPECT_LE((v.segment<3>(3) - 3.0 * theta * axis).norm(), 1e-12 * (1.0 + theta)) << theta;
    EXPECT_EQ(v.head<3>(), Vector3::Zero());
    // The sensor turns by ω (its own axes) for dt: the normal, fixed in the world, is seen
    // rotated back, and the tilt shrinks at the rate k_θ θ.
    const Vector3 normal_after = so3_exp(v.segment<3>(3) * dt).transpose() * normal;
    EXPECT_LT(tilt(normal_after), theta) << theta;
    EXPECT_NEAR(tilt(normal_after), theta * (1.0 - 3.0 * dt), 1e-6 * theta) << theta;
  }
}

// The sensor twist is that of the rigid tool: at the MOTION origin the velocity picks up
// ω × (MOTION origin − sensor origin). Checked in TOOL axes from the definition.
TEST(Proximity, SensorTwistIsReExpressedAtTheMotionOriginInMotionAxes) {
  const Frame tool_T_motion{so3_exp(Vector3(0.3, -0.6, 0.2)), Vector3(0.01, 0.02, 0.15)};
  BehaviourContextFixture fixture(load_panda_arm(), tool_T_motion);
  auto params = velocity_params();
  params.tool_T_sensor = Frame{so3_exp(Vector3(-0.5, 0.1, 0.9)), Vector3(0.06, -0.03, 0.04)};
  const Vector3 normal = so3_exp(Vector3(0.2, 0.3, 0.0)) * Vector3::UnitZ();
  const ProximityReading r = reading(0.07, normal);
  const MotionVector v = run(params, fixture, r);

  const Vector6 twist_L = proximity_sensor_twist(params, r);
  const Matrix3& R_ts = params.tool_T_sensor.R;
  const Vector3 omega_tool = R_ts * twist_L.tail<3>();
  const Vector3 v_sensor_tool = R_ts * twist_L.head<3>();
  const Vector3 v_motion_tool =
      v_sensor_tool + omega_tool.cross(tool_T_motion.p - params.tool_T_sensor.p);
  EXPECT_LE((v.head<3>() - tool_T_motion.R.transpose() * v_motion_tool).norm(), 1e-15);
  EXPECT_LE((v.segment<3>(3) - tool_T_motion.R.transpose() * omega_tool).norm(), 1e-15);
  EXPECT_EQ(v[6], 0.0);
  EXPECT_GT(v.head<3>().norm(), 0.01);
}

// End to end on the arm: a plane in BASE, a simulated range/tilt reading of it, the
// behaviour's velocity resolved to joints and integrated. The sensor ends aligned with the
// plane at the reference distance, with ψ held.
TEST(Proximity, ClosedLoopHoldsTheSensorAlignedAtTheReferenceDistanceFromAPlane) {
  for (const auto& [name, arm] : testing::behaviour_test_arms()) {
    SCOPED_TRACE(name);
    BehaviourContextFixture fixture(
        arm, Frame{so3_exp(Vector3(0.2, 0.0, -0.4)), Vector3(0.0, 0.02, 0.1)});
    auto params = velocity_params();
    params.tool_T_sensor = Frame{so3_exp(Vector3(0.2, -0.1, 0.0)), Vector3(0.04, 0.0, 0.05)};
    JointVector q;
    q << 0.2, 0.4, -0.1, -1.6, 0.2, 1.4, 0.3;
    fixture.set(q);
    const Frame sensor0 = fixture.state().tool * params.tool_T_sensor;
    // Plane 0.16 m from the sensor, its normal tilted 0.35 rad from the sensor's z.
    const Vector3 n_base = sensor0.R * so3_exp(0.35 * Vector3(0.6, 0.8, 0.0)) * Vector3::UnitZ();
    const Vector3 plane_point = sensor0.p - 0.16 * n_base;
    const double psi0 = fixture.arm_angle().psi;

    Proximity behaviour;
    behaviour.reset(params, fixture.context());
    const double dt = 0.01;
    for (int step = 0; step < 800; ++step) {
      const Frame sensor = fixture.state().tool * params.tool_T_sensor;
      const Vector3 z = sensor.R.col(2);
      ProximityReading& r = fixture.arm_state().proximity;
      r.valid = z.dot(n_base) > 0.1;
      r.distance = (sensor.p - plane_point).dot(n_base) / z.dot(n_base);  // along −z
      r.surface_normal = sensor.R.transpose() * n_base;
      ASSERT_TRUE(r.valid);
      BehaviourOutput out;
      behaviour.update(params, fixture.context(), out);
      JointVector qdot;
      ASSERT_EQ(weighted_dls<kMotionDim>(fixture.jacobian(), MotionVector::Ones(),
                                         JointVector::Zero(), out.velocity, qdot),
                DlsStatus::kOk);
      fixture.set(fixture.q() + qdot * dt);
    }
    const Frame sensor = fixture.state().tool * params.tool_T_sensor;
    EXPECT_LE(std::acos(std::min(1.0, sensor.R.col(2).dot(n_base))), 1e-4);
    EXPECT_NEAR((sensor.p - plane_point).dot(n_base), 0.1, 1e-4);
    // ψ̇ = 0 is commanded; what remains is the explicit Euler integration's second order.
    EXPECT_NEAR(fixture.arm_angle().psi, psi0, 1e-3);
  }
}

TEST(Proximity, ForceInputIsTheDampingTimesTheVelocity) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = velocity_params();
  params.input = InputKind::kForce;
  params.damping = MotionVector::LinSpaced(50.0, 350.0);
  fixture.arm_state().proximity = reading(0.03, so3_exp(Vector3(0.1, 0.0, 0.0)) * Vector3::UnitZ());
  Proximity behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  const Vector6 twist = proximity_sensor_twist(params, fixture.arm_state().proximity);
  EXPECT_LE((out.force.head<6>() - params.damping.head<6>().cwiseProduct(twist)).norm(), 1e-12);
  EXPECT_EQ(out.force[6], 0.0);
  EXPECT_EQ(out.velocity, MotionVector::Zero());
  EXPECT_GT(out.force.norm(), 1.0);
}

TEST(Proximity, AddsNothingWithoutAValidReadingOrWhenDisabled) {
  BehaviourContextFixture fixture(load_default_arm());
  auto params = velocity_params();
  ProximityReading r = reading(0.02, Vector3(0.3, 0.0, 1.0).normalized());
  r.valid = false;
  EXPECT_EQ(run(params, fixture, r), MotionVector::Zero());
  r.valid = true;
  params.enabled = false;
  EXPECT_EQ(run(params, fixture, r), MotionVector::Zero());
  params.enabled = true;
  fixture.context().arm = nullptr;
  Proximity behaviour;
  BehaviourOutput out;
  behaviour.update(params, fixture.context(), out);
  EXPECT_EQ(out.velocity, MotionVector::Zero());
}

// A normal facing straight away from the sensor gives no rotation axis: only the distance
// term acts, and the output stays finite.
TEST(Proximity, ANormalFacingAwayCommandsNoRotation) {
  BehaviourContextFixture fixture(load_default_arm());
  const auto params = velocity_params();
  const MotionVector v = run(params, fixture, reading(0.05, -Vector3::UnitZ()));
  EXPECT_TRUE(v.allFinite());
  EXPECT_EQ(v.segment<3>(3), Vector3::Zero());
  EXPECT_NEAR(v[2], 2.0 * 0.05, 1e-15);
}

}  // namespace
}  // namespace tether::remote
