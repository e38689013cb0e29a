#include "tether/local/teleop/local_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "tether/common/units.h"
#include "tether/proto/task_io.h"

namespace tether::local {
namespace {

TaskParameters shipped(const std::string& name) {
  return proto::load_task_file(std::string(TETHER_TASK_DIR) + "/" + name + ".textproto");
}

// The seed's shared-control door, driven the way the ground drives it: one increment per
// 1 ms sample, the handle turning about its x axis at 15°/s.
TEST(LocalModel, TurnsTheDoorAsTheHandDrivesItAtOnce) {
  for (const char* name : {"door_shared", "door_shared_delayed"}) {
    SCOPED_TRACE(name);
    LocalModel model(parse_local_model("iiwa7:door"), shipped(name));
    Vector6 increment = Vector6::Zero();
    increment[3] = 15.0 * kDegToRad * 1e-3;
    double master_in = 0.0;
    for (int k = 0; k < 2000; ++k) {
      model.step(increment, 0.0, TeleopMode::kTool, true, master_in, 1e-3);
      // The hand puts in what the model's wrench resists (a hand that renders it fully).
      master_in += std::max(0.0, model.wrench().dot(increment));
    }
    for (int k = 0; k < 500; ++k) {
      model.step(Vector6::Zero(), 0.0, TeleopMode::kTool, true, master_in, 1e-3);
    }
    EXPECT_EQ(model.state(), ExecutorState::kRunning);
    EXPECT_NEAR(model.time(), 2.5, 0.01);
    // 30° commanded; the arm's compliance gives a little.
    EXPECT_NEAR(model.aux0() * kRadToDeg, 30.0, 3.0);
    EXPECT_TRUE(model.wrench().allFinite());
  }
}

TEST(LocalModel, AdvancesByTheTimeThatPassedNotBySamples) {
  LocalModel model(parse_local_model("door"), shipped("door_shared"));
  for (int k = 0; k < 100; ++k)
    model.step(Vector6::Zero(), 0.0, TeleopMode::kTool, true, 0.0, 4e-3);
  EXPECT_NEAR(model.time(), 0.4, 0.005);
}

TEST(LocalModel, RefusesAnUnknownArmOrSceneNamingTheChoices) {
  try {
    parse_local_model("iiwa7:kitchen");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'iiwa7:kitchen'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("door"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_local_model("ur5:door"), std::invalid_argument);
  const LocalModelOptions o = parse_local_model("panda:wall");
  EXPECT_EQ(o.arm, "panda");
  EXPECT_EQ(o.scene, "wall");
}

}  // namespace
}  // namespace tether::local
