#include "tether/local/hand_controller/operator_input.h"

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <random>

#include "tether/common/spatial.h"
#include "tether/local/hand_controller/simulated.h"

namespace tether::local {
namespace {

// A device replaying prepared samples, with fixed Jacobians, that records what it renders.
class ReplayDevice final : public HandController {
 public:
  struct Log {
    std::deque<DeviceSample> pending;
    std::optional<TeleopMode> requested;  // the mode picked on the device, if any
    Vector6 rendered = Vector6::Constant(-1.0);
    bool actuators = true;
  };
  explicit ReplayDevice(Log& log) : log_(&log) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    base_ = Matrix6::NullaryExpr([&](Eigen::Index, Eigen::Index) { return u(rng); });
    handle_ = Matrix6::NullaryExpr([&](Eigen::Index, Eigen::Index) { return u(rng); });
  }
  std::string describe() const override { return "replay"; }
  DeviceSample sample(double now) override {
    DeviceSample s;
    if (!log_->pending.empty()) {
      s = log_->pending.front();
      log_->pending.pop_front();
    }
    s.time = now;
    return s;
  }
  bool has_actuators() const override { return log_->actuators; }
  std::optional<TeleopMode> requested_mode() const override { return log_->requested; }
  void render(const Eigen::Ref<const Vector6>& tau) override { log_->rendered = tau; }
  Matrix6 jacobian(HandFrame frame) const override {
    return frame == HandFrame::kBase ? base_ : handle_;
  }
  Matrix6 base_, handle_;

 private:
  Log* log_;
};

DeviceSample moving(bool deadman, bool clutch, int scale_steps = 0) {
  DeviceSample s;
  s.increment_handle << 1e-3, 0, 0, 0, 0, 2e-3;
  s.increment_base << 0, 1e-3, 0, 3e-3, 0, 0;
  s.arm_angle_increment = 1e-3;
  s.deadman = deadman;
  s.clutch = clutch;
  s.scale_steps = scale_steps;
  return s;
}

struct OperatorInputFixture : ::testing::Test {
  ReplayDevice::Log log;
  ReplayDevice* device = nullptr;
  OperatorInputConfig config;
  std::unique_ptr<OperatorInput> input;

  void make() {
    auto owned = std::make_unique<ReplayDevice>(log);
    device = owned.get();
    input = std::make_unique<OperatorInput>(std::move(owned), config);
  }
  OperatorIncrement step(const DeviceSample& s) {
    log.pending.push_back(s);
    return input->sample(0.0);
  }
};

TEST_F(OperatorInputFixture, ToolModeSendsHandleIncrementsAndWorldCameraSendBaseIncrements) {
  config.translation_scale = 2.0;
  config.rotation_scale = 0.5;
  config.arm_angle_scale = 3.0;
  make();
  OperatorIncrement out = step(moving(true, false));
  Vector6 expected;
  expected << 2e-3, 0, 0, 0, 0, 1e-3;
  EXPECT_EQ(out.mode, TeleopMode::kTool);
  EXPECT_LT((out.increment - expected).norm(), 1e-15);
  EXPECT_NEAR(out.arm_angle_increment, 3e-3, 1e-15);
  for (const TeleopMode mode : {TeleopMode::kWorld, TeleopMode::kCamera}) {
    step(moving(true, true));  // clutch to change mode
    input->set_mode(mode);
    out = step(moving(true, false));
    expected << 0, 2e-3, 0, 1.5e-3, 0, 0;
    EXPECT_EQ(out.mode, mode);
    EXPECT_LT((out.increment - expected).norm(), 1e-15);
  }
}

TEST_F(OperatorInputFixture, ClutchSuppressesMotionSoTheHandCanReIndex) {
  make();
  Vector6 sent = Vector6::Zero();
  for (int i = 0; i < 10; ++i) sent += step(moving(true, false)).increment;
  for (int i = 0; i < 50; ++i) {  // the hand moves back while clutched: nothing is sent
    const OperatorIncrement out = step(moving(true, true));
    EXPECT_TRUE(out.clutch);
    EXPECT_EQ(out.increment.norm(), 0.0);
    EXPECT_EQ(out.arm_angle_increment, 0.0);
    EXPECT_FALSE(input->engaged());
  }
  for (int i = 0; i < 10; ++i) sent += step(moving(true, false)).increment;
  EXPECT_NEAR(sent[0], 20e-3, 1e-15);  // only the unclutched motion, no jump at release
}

TEST_F(OperatorInputFixture, DeadmanReleaseZeroesIncrementsAndIsReported) {
  make();
  step(moving(true, false));
  const OperatorIncrement out = step(moving(false, false));
  EXPECT_FALSE(out.deadman);
  EXPECT_EQ(out.increment.norm(), 0.0);
  EXPECT_EQ(input->counters().deadman_releases, 1u);
  DeviceSample lost = moving(true, false);
  lost.valid = false;
  EXPECT_FALSE(step(lost).valid);
  EXPECT_EQ(input->counters().invalid_samples, 1u);
}

TEST_F(OperatorInputFixture, ModeChangeIsRefusedWhileMotionIsBeingSent) {
  make();
  step(moving(true, false));
  try {
    input->set_mode(TeleopMode::kWorld);
    FAIL() << "mode changed while engaged";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "teleoperation mode tool -> world refused: engage the clutch or release the "
              "deadman first (deadman held, clutch released)");
  }
  step(moving(false, false));
  input->set_mode(TeleopMode::kWorld);
  EXPECT_EQ(input->mode(), TeleopMode::kWorld);
}

TEST_F(OperatorInputFixture, AModePickedOnTheDeviceWaitsUntilTheHandStopsDriving) {
  make();
  EXPECT_EQ(step(moving(true, false)).mode, TeleopMode::kTool);
  log.requested = TeleopMode::kWorld;
  // Engaged: still tool mode, still handle increments.
  OperatorIncrement out = step(moving(true, false));
  EXPECT_EQ(out.mode, TeleopMode::kTool);
  EXPECT_DOUBLE_EQ(out.increment[0], 1e-3);
  // Clutched, then engaged again: world mode, base increments.
  EXPECT_EQ(step(moving(true, true)).mode, TeleopMode::kWorld);
  out = step(moving(true, false));
  EXPECT_EQ(out.mode, TeleopMode::kWorld);
  EXPECT_DOUBLE_EQ(out.increment[1], 1e-3);
  EXPECT_DOUBLE_EQ(out.increment[0], 0.0);
}

TEST_F(OperatorInputFixture, ScaleChangesOnlyWhileClutchedWithinRange) {
  make();
  step(moving(true, false, /*scale_steps=*/2));
  EXPECT_EQ(input->translation_scale(), 1.0);
  EXPECT_EQ(input->counters().refused_scale_steps, 2u);
  try {
    input->set_scale(2.0, 3.0);
    FAIL() << "scale changed while not clutched";
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "operator_input.translation_scale = 2, operator_input.rotation_scale = 3 refused: "
              "scales change only while the clutch is engaged (allowed range [0.1, 10])");
  }
  step(moving(true, true, 2));  // two presses while clutched: ×1.25²
  EXPECT_DOUBLE_EQ(input->translation_scale(), 1.5625);
  EXPECT_DOUBLE_EQ(input->rotation_scale(), 1.5625);
  step(moving(true, true, -40));  // clamped at the minimum
  EXPECT_DOUBLE_EQ(input->translation_scale(), 0.1);
  input->set_scale(2.0, 3.0);
  EXPECT_EQ(input->rotation_scale(), 3.0);
  try {
    input->set_scale(20.0, 1.0);
    FAIL() << "accepted a scale above the maximum";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "operator_input.translation_scale = 20: must be finite and in [0.1, 10]");
  }
  step(moving(true, false));
  EXPECT_NEAR(step(moving(true, false)).increment[0], 2e-3, 1e-15);
}

TEST_F(OperatorInputFixture, ReflectionPicksTheSourceScalesClampsAndMapsThroughTheModeJacobian) {
  config.reflection.source = ForceReflectionConfig::Source::kMeasured;
  config.reflection.force_scale = 0.5;
  config.reflection.torque_scale = 0.1;
  config.reflection.max_force = 4.0;
  config.reflection.max_torque = 10.0;
  make();
  step(moving(true, false));
  Vector6 measured, error;
  measured << 6.0, 0.0, -8.0, 1.0, 2.0, -2.0;  // |f| = 10 N → 5 N after scale → clamped to 4
  error << 1.0, 2.0, 3.0, 0.0, 0.0, 0.0;
  Vector6 tau = input->reflect(measured, error);
  Vector6 expected;
  expected << -2.4, 0.0, 3.2, -0.1, -0.2, 0.2;  // −F_a: the environment's reaction
  EXPECT_LT((input->reflected_wrench() - expected).norm(), 1e-12);
  EXPECT_LT((tau - device->handle_.transpose() * expected).norm(), 1e-12);  // tool: HH
  EXPECT_LT((log.rendered - tau).norm(), 0.0 + 1e-15);

  ForceReflectionConfig tracking = config.reflection;
  tracking.source = ForceReflectionConfig::Source::kTrackingError;
  tracking.max_torque = 0.05;
  input->set_reflection(tracking);
  step(moving(true, true));
  input->set_mode(TeleopMode::kWorld);
  step(moving(true, false));
  error << 1.0, 2.0, 3.0, 3.0, 0.0, 4.0;  // torque 5 → 0.5 → clamped to 0.05, same direction
  tau = input->reflect(measured, error);
  expected << 0.5, 1.0, 1.5, 0.03, 0.0, 0.04;
  EXPECT_LT((input->reflected_wrench() - expected).norm(), 1e-12);
  EXPECT_LT((tau - device->base_.transpose() * expected).norm(), 1e-12);  // world: HB
}

TEST_F(OperatorInputFixture, NothingIsRenderedUnlessMotionIsBeingSent) {
  config.reflection = {ForceReflectionConfig::Source::kMeasured, 1.0, 1.0, 50.0, 5.0};
  make();
  const Vector6 measured = Vector6::Constant(1.0);
  step(moving(true, true));  // clutched
  EXPECT_EQ(input->reflect(measured, measured).norm(), 0.0);
  EXPECT_EQ(log.rendered.norm(), 0.0);
  step(moving(false, false));  // let go
  EXPECT_EQ(input->reflect(measured, measured).norm(), 0.0);
  step(moving(true, false));
  EXPECT_GT(input->reflect(measured, measured).norm(), 0.0);
  Vector6 bad = measured;
  bad[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(input->reflect(bad, measured).norm(), 0.0);
  EXPECT_EQ(input->counters().rejected_wrenches, 1u);
  log.actuators = false;  // a device without actuators: the wrench is kept, no torque
  EXPECT_EQ(input->reflect(measured, measured).norm(), 0.0);
  EXPECT_GT(input->reflected_wrench().norm(), 0.0);
}

TEST(OperatorInputConfigValidation, NamesTheFieldTheValueAndTheRange) {
  OperatorInputConfig config;
  config.reflection.max_force = -1.0;
  try {
    validate(config);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "reflection.max_force = -1: must be finite and in [0, 100]");
  }
  config = OperatorInputConfig{};
  config.reflection.damping_ratio = 11.0;
  try {
    validate(config);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "reflection.damping_ratio = 11: must be finite and in [0, 10]");
  }
  config = OperatorInputConfig{};
  config.scale_step = 1.0;
  EXPECT_THROW(validate(config), std::invalid_argument);
  config = OperatorInputConfig{};
  config.translation_scale = 50.0;
  EXPECT_THROW(validate(config), std::invalid_argument);
  EXPECT_THROW(OperatorInput(nullptr, OperatorInputConfig{}), std::invalid_argument);
}

// End to end with the simulated hand controller in tool mode: a measured wrench rotated into
// HH pushes the handle, in HH axes, by the reflected force over the hand's stiffness.
TEST(OperatorInputWithSimulatedDevice, ToolModeReflectionDeflectsTheHandleInHandleAxes) {
  SimulatedHandControllerConfig sim;
  sim.geometry.wrist_T_handle.R = so3_exp(Vector3(0.3, 0.5, -0.2));
  OperatorInputConfig config;
  config.reflection = {ForceReflectionConfig::Source::kMeasured, 0.5, 0.5, 10.0, 1.0};
  auto device = std::make_unique<SimulatedHandController>(sim);
  const SimulatedHandController& hc = *device;
  OperatorInput input(std::move(device), config);
  const Frame rest = hc.handle_pose();
  Vector6 measured;
  measured << -4.0, 2.0, 0.0, 0.0, 0.0, -0.04;  // reflected: (2, −1, 0, 0, 0, 0.02)
  for (int i = 0; i <= 4000; ++i) {
    input.sample(0.001 * i);
    input.reflect(measured, Vector6::Zero());
  }
  const Frame moved = hc.handle_pose();
  const Vector3 deflection_hh = rest.R.transpose() * (moved.p - rest.p);
  const Vector3 turn_hh = rest.R.transpose() * so3_log(moved.R * rest.R.transpose());
  EXPECT_LT((deflection_hh - Vector3(2.0, -1.0, 0.0) / sim.hand.translation_stiffness).norm(),
            2e-4);
  EXPECT_LT((turn_hh - Vector3(0, 0, 0.02) / sim.hand.rotation_stiffness).norm(), 2e-4);
}

}  // namespace
}  // namespace tether::local
