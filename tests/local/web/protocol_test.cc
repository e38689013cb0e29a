// The console's wire format as pure functions (web_protocol.h, PROTOCOL.md): what a telemetry
// message says of the sample's time, the deviation from the reference, the running task's
// bounds and the scene's auxiliary readings; parse errors placed at their line and column;
// the shipped task library; and the set a task command builds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tether/common/motion_space.h"
#include "tether/common/urdf_loader.h"
#include "tether/local/commands/task_command.h"
#include "tether/local/web/web_protocol.h"
#include "tether/proto/task_io.h"
#include "tether/remote/sim/simulated_arm.h"
#include "tether/remote/task/validation.h"

namespace tether::local::web {
namespace {

using json = nlohmann::json;

// The shipped door task: its MOTION frame on the hinge and its bounds.
TaskParameters door_task() {
  return proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_force.textproto");
}

// A posture away from singularities (elbow bent, so the arm angle is defined).
JointVector posture() {
  JointVector q;
  q << 0.1, 0.5, -0.2, -1.4, 0.3, 0.8, 0.2;
  return q;
}

// The MOTION frame at q, as the site computes it from its joints.
Frame motion_at(const ArmView& arm, const JointVector& q, const TaskParameters& task) {
  KinematicState state;
  forward_kinematics(arm.model(), q, state);
  return motion_frame_pose(state, task.tool_T_motion);
}

// A running sample whose commanded MOTION origin is that of its commanded joints, as a site
// reports it, and whose commanded arm angle is theirs.
TelemetrySample running_sample(const ArmView& arm, const TaskParameters& task) {
  TelemetrySample s;
  s.state = ExecutorState::kRunning;
  s.commanded_joints = posture();
  s.measured_joints = posture();
  s.motion_position = motion_at(arm, posture(), task).p;
  KinematicState state;
  forward_kinematics(arm.model(), posture(), state);
  EXPECT_EQ(ArmAngleModel(task.arm_angle_reference).angle(state, s.arm_angle), ArmAngleStatus::kOk);
  return s;
}

TEST(TelemetryMessage, CarriesTheSitesSampleTimeInMilliseconds) {
  TelemetrySample s;
  s.timing.sample_unix_ns = 1'700'000'000'123'456'789;
  const json m = telemetry_message("left", s, nullptr, nullptr, -1.0);
  EXPECT_NEAR(m["sample_unix_ms"].get<double>(), 1'700'000'000'123.456789, 1e-3);
  s.timing.sample_unix_ns = 0;  // a site that does not say
  EXPECT_TRUE(telemetry_message("left", s, nullptr, nullptr, -1.0)["sample_unix_ms"].is_null());
}

// With the arm where it was commanded, the deviation is the reported x_c − x_r itself: its
// translation's length, its rotation's angle and |ψ_c − ψ_r|.
TEST(TelemetryMessage, DeviationOfAnArmAtItsCommandIsTheReportedError) {
  const ArmView arm("iiwa7");
  const TaskParameters task = door_task();
  TelemetrySample s = running_sample(arm, task);
  s.error << 0.003, -0.004, 0.0, 0.0, 0.02, 0.0, 0.05;
  const json m = telemetry_message("left", s, &arm, &task, -1.0);
  ASSERT_FALSE(m["reference"].is_null()) << m.dump();
  ASSERT_FALSE(m["deviation"].is_null()) << m.dump();
  EXPECT_NEAR(m["deviation"]["translation"].get<double>(), 0.005, 1e-9);
  EXPECT_NEAR(m["deviation"]["rotation"].get<double>(), 0.02, 1e-9);
  EXPECT_NEAR(m["deviation"]["arm_angle"].get<double>(), 0.05, 1e-9);
}

// With the reference where the command is, the deviation is how far the measured joints put
// the MOTION frame from the commanded ones: forward kinematics with the task's tool_T_motion.
TEST(TelemetryMessage, DeviationMeasuresTheActualMotionPoseFromTheMeasuredJoints) {
  const ArmView arm("iiwa7");
  const TaskParameters task = door_task();
  TelemetrySample s = running_sample(arm, task);
  s.measured_joints[3] += 0.01;
  const Frame commanded = motion_at(arm, s.commanded_joints, task);
  const Frame actual = motion_at(arm, s.measured_joints, task);
  const json m = telemetry_message("left", s, &arm, &task, -1.0);
  ASSERT_FALSE(m["deviation"].is_null()) << m.dump();
  const double moved = (actual.p - commanded.p).norm();
  EXPECT_GT(moved, 0.001) << "the MOTION origin on the hinge is far from joint 4";
  EXPECT_NEAR(m["deviation"]["translation"].get<double>(), moved, 1e-9);
  EXPECT_NEAR(m["deviation"]["rotation"].get<double>(), 0.01, 1e-6) << "one joint turned 0.01 rad";
  EXPECT_TRUE(m["deviation"]["arm_angle"].is_number());
}

TEST(TelemetryMessage, DeviationIsNullWithoutAReferenceOrTheTasksMotionFrame) {
  const ArmView arm("iiwa7");
  const TaskParameters task = door_task();
  TelemetrySample s = running_sample(arm, task);
  EXPECT_TRUE(telemetry_message("left", s, &arm, nullptr, -1.0)["deviation"].is_null());
  EXPECT_TRUE(telemetry_message("left", s, nullptr, &task, -1.0)["deviation"].is_null());
  s.state = ExecutorState::kStopped;  // no reference once stopped
  const json m = telemetry_message("left", s, &arm, &task, -1.0);
  EXPECT_TRUE(m["reference"].is_null());
  EXPECT_TRUE(m["deviation"].is_null());
}

TEST(TelemetryMessage, BoundsAreTheRunningTasksWithNullForEachBoundThatIsOff) {
  TelemetrySample s;
  EXPECT_TRUE(telemetry_message("left", s, nullptr, nullptr, -1.0)["bounds"].is_null())
      << "bounds before the ground has the task";
  TaskParameters task = door_task();  // force 150 N, torque 60 N·m, translation 0.05 m
  const json b = telemetry_message("left", s, nullptr, &task, -1.0)["bounds"];
  EXPECT_EQ(b["force"], 150.0);
  EXPECT_EQ(b["torque"], 60.0);
  EXPECT_EQ(b["translation"], 0.05);
  EXPECT_TRUE(b["rotation"].is_null());
  EXPECT_TRUE(b["arm_angle"].is_null());
  ASSERT_EQ(b["joint_margin"].size(), 7u);
  EXPECT_EQ(b["joint_margin"][6], 0.05);
  EXPECT_TRUE(b["min_proximity"].is_null());
  EXPECT_TRUE(b["max_proximity"].is_null());
  EXPECT_EQ(b["max_consecutive_overruns"], task.bounds.max_consecutive_overruns);
  // The older member stays as it was.
  EXPECT_EQ(telemetry_message("left", s, nullptr, &task, -1.0)["wrench_bounds"]["force"], 150.0);

  task.bounds.joint_limit_margin.setZero();
  task.bounds.min_proximity_distance = 0.02;
  task.bounds.max_proximity_distance = 0.3;
  const json window = bounds_json(task.bounds);
  EXPECT_TRUE(window["joint_margin"].is_null()) << "no margin kept from any limit";
  EXPECT_EQ(window["min_proximity"], 0.02);
  EXPECT_EQ(window["max_proximity"], 0.3);
}

TEST(TelemetryMessage, AuxReadingsAreNamedByTheScenesJointsWithTheirRange) {
  SceneDescription door;
  door.name = "door";
  SceneJoint hinge;
  hinge.name = "door_hinge";
  hinge.lower = -0.1;
  hinge.upper = 1.75;
  hinge.aux_index = 0;
  door.joints.push_back(hinge);
  SceneJoint unreported = hinge;  // a joint telemetry does not carry
  unreported.name = "latch_hinge";
  unreported.aux_index = 9;
  door.joints.push_back(unreported);
  TelemetrySample s;
  s.aux = {0.6, 0.2, 3.0, 0.0};
  const json aux = telemetry_message("left", s, nullptr, nullptr, -1.0, nullptr, &door)["aux"];
  ASSERT_EQ(aux.size(), 1u) << aux.dump();
  EXPECT_EQ(aux[0]["name"], "door angle");
  EXPECT_EQ(aux[0]["value"], 0.6);
  EXPECT_EQ(aux[0]["unit"], "rad");
  EXPECT_EQ(aux[0]["min"], -0.1);
  EXPECT_EQ(aux[0]["max"], 1.75);

  door.joints[0].lower = door.joints[0].upper = 0.0;  // a range the scene does not give
  const json open = telemetry_message("left", s, nullptr, nullptr, -1.0, nullptr, &door)["aux"];
  EXPECT_TRUE(open[0]["min"].is_null());
  EXPECT_TRUE(open[0]["max"].is_null());
  EXPECT_EQ(telemetry_message("left", s, nullptr, nullptr, -1.0)["aux"], json::array())
      << "readings of a scene the ground does not know";
}

// A text that does not parse is marked where the parser stopped, 1-based; a validation issue
// carries its field instead.
TEST(TaskErrors, AParseErrorCarriesItsLineAndColumn) {
  std::vector<FieldError> errors;
  EXPECT_FALSE(
      parse_and_validate("name: \"x\"\nimpedance {\n  mass { bogus: 3 }\n}\n", "iiwa7", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_EQ(errors[0].column, 10);
  EXPECT_NE(errors[0].message.find("bogus"), std::string::npos) << errors[0].message;
  const json e = to_json(errors)[0];
  EXPECT_EQ(e["line"], 3);
  EXPECT_EQ(e["column"], 10);

  EXPECT_FALSE(parse_and_validate("impedance { mass { rotation { x: -2 } } }", "iiwa7", errors));
  bool named = false;
  for (const json& issue : to_json(errors)) {
    named = named || issue["field"] == "impedance.mass.rotation.x";
    EXPECT_FALSE(issue.contains("line")) << issue.dump();
  }
  EXPECT_TRUE(named) << to_json(errors).dump();
}

TEST(TaskErrors, AConversionErrorAtAFieldCarriesTheFieldsPlace) {
  std::vector<FieldError> errors;
  EXPECT_FALSE(parse_and_validate(
      "name: \"x\"\nimpedance {\n  mass { translation { x: nan } }\n}\n", "iiwa7", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "impedance.mass.translation.x");
  EXPECT_EQ(errors[0].line, 3);
  EXPECT_EQ(errors[0].column, 24);
}

TEST(TaskLibrary, ListsTheShippedTasksWithSummarySceneAndText) {
  EXPECT_EQ(std::filesystem::path(default_tasks_directory()),
            std::filesystem::path(TETHER_TASK_DIR));
  const json tasks = task_library(TETHER_TASK_DIR);
  const json* door = nullptr;
  for (const json& t : tasks) {
    if (t["file"] == "door_force.textproto") door = &t;
    EXPECT_FALSE(t.contains("error")) << t["file"] << ": " << t.value("error", "");
  }
  ASSERT_NE(door, nullptr) << tasks.dump();
  EXPECT_EQ((*door)["name"], "door_force");
  EXPECT_EQ((*door)["summary"], "1 ms: force control");
  EXPECT_EQ((*door)["scene"], "door");
  std::ifstream in(std::string(TETHER_TASK_DIR) + "/door_force.textproto");
  EXPECT_EQ((*door)["text"], std::string(std::istreambuf_iterator<char>(in), {}));
}

TEST(TaskLibrary, AFileThatDoesNotParseIsListedWithItsError) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tether_library_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "broken.textproto") << "impedance {\n";
  std::ofstream(dir / "wall_press.textproto") << "name: \"press\"\nperiod_s: 0.002\n";
  std::ofstream(dir / "reach.textproto") << "# tether-remote --scene obstacles --task reach\n";
  std::ofstream(dir / "notes.txt") << "not a task";
  const json tasks = task_library(dir.string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(tasks.size(), 3u) << tasks.dump();
  EXPECT_EQ(tasks[0]["file"], "broken.textproto");
  EXPECT_EQ(tasks[0]["name"], "broken");
  EXPECT_NE(tasks[0]["error"].get<std::string>().find("broken.textproto:2"), std::string::npos)
      << tasks[0].dump();
  EXPECT_EQ(tasks[0]["text"], "impedance {\n");
  EXPECT_EQ(tasks[1]["scene"], "obstacles") << "the scene its comment runs it in";
  EXPECT_EQ(tasks[1]["summary"], "1 ms: -");
  EXPECT_EQ(tasks[2]["name"], "press");
  EXPECT_EQ(tasks[2]["scene"], "wall") << "the scene its file name begins with";
  EXPECT_EQ(tasks[2]["summary"], "2 ms: -");
  EXPECT_THROW(task_library((dir / "gone").string()), std::runtime_error);
}

TEST(TaskLibrary, TheSceneOfATaskFileComesFromItsCommentsOrItsName) {
  EXPECT_EQ(task_file_scene("x.textproto", "#   tether-remote --scene wall --task x\n"), "wall");
  EXPECT_EQ(task_file_scene("x.textproto", "# tether-ground --predict iiwa7:door\n"), "door");
  EXPECT_EQ(task_file_scene("door_spring.textproto", "name: \"a\"\n"), "door");
  EXPECT_EQ(task_file_scene("reach_far.textproto", "name: \"a\" # --scene nowhere\n"), "");
}

TEST(CommandTask, BuildsTheSetTetherDoWouldBuild) {
  const CommandLibrary library = CommandLibrary::load(default_commands_directory());
  const TaskCommand* open_door = library.find("open-door");
  ASSERT_NE(open_door, nullptr);
  const json r = command_task(*open_door, {{"mode", "spring"}, {"angle", "60"}}, "iiwa7");
  EXPECT_EQ(r["name"], "open-door_spring_angle60");
  EXPECT_EQ(r["scene"], "door");
  EXPECT_EQ(r["summary"], "1 ms: spring trajectory, force control");
  const TaskParameters task = proto::parse_task_text(r["text"].get<std::string>(), "command");
  EXPECT_EQ(task.name, "open-door_spring_angle60");
  EXPECT_NEAR(task.bounds.max_rotation_deviation, 60 * 0.02, 1e-12);
}

TEST(CommandTask, ABadArgumentIsRefusedNamingItsValueAndRange) {
  const CommandLibrary library = CommandLibrary::load(default_commands_directory());
  const TaskCommand* open_door = library.find("open-door");
  ASSERT_NE(open_door, nullptr);
  try {
    command_task(*open_door, {{"mode", "spring"}, {"angle", "120"}}, "iiwa7");
    FAIL() << "expanded";
  } catch (const CommandArgumentError& e) {
    EXPECT_EQ(e.argument(), "angle");
    EXPECT_NE(std::string(e.what()).find("120"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[0, 90] deg"), std::string::npos) << e.what();
  }
}

// The door scene as the simulated site describes it reaches the page whole: the panel and
// handle on the hinge (turned by the telemetry's "door angle"), the frame fixed around them.
TEST(SceneJson, CarriesEveryBodyWithItsShapePoseAndJointAndTheJointsReadingLabel) {
  const ArmModel arm = load_default_arm();
  remote::SimulationOptions options;
  options.scene = remote::SceneKind::kDoor;
  const remote::SimulatedArm sim(arm, options);
  const SceneDescription& scene = sim.scene_description();
  const nlohmann::json j = scene_json(scene);
  EXPECT_EQ(j["name"], "door");
  ASSERT_EQ(j["bodies"].size(), scene.bodies.size());
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : j["bodies"]) by_name[b["name"].get<std::string>()] = b;
  ASSERT_TRUE(by_name.count("door_panel"));
  ASSERT_TRUE(by_name.count("door_frame_top"));
  EXPECT_EQ(by_name["door_panel"]["shape"], "box");
  EXPECT_EQ(by_name["door_panel"]["joint"], "door_hinge");
  EXPECT_EQ(by_name["door_handle"]["shape"], "cylinder");
  EXPECT_EQ(by_name["door_frame_top"]["joint"], "");
  for (const SceneBody& b : scene.bodies) {
    const nlohmann::json& out = by_name[b.name];
    for (int k = 0; k < 3; ++k) {
      EXPECT_DOUBLE_EQ(out["p"][k].get<double>(), b.pose.p[k]) << b.name;
      EXPECT_DOUBLE_EQ(out["size"][k].get<double>(), b.size[k]) << b.name;
    }
    // [w, x, y, z], a unit quaternion of the body's rotation.
    const Eigen::Quaterniond q(out["quat"][0].get<double>(), out["quat"][1].get<double>(),
                               out["quat"][2].get<double>(), out["quat"][3].get<double>());
    EXPECT_NEAR(q.norm(), 1.0, 1e-9);
    EXPECT_LT((q.toRotationMatrix() - b.pose.R).norm(), 1e-9) << b.name;
  }
  ASSERT_EQ(j["cameras"].size(), scene.cameras.size());
  EXPECT_EQ(j["cameras"][1]["name"], "overview");
  EXPECT_EQ(j["cameras"][2]["stereo_partner"], "stereo_right");
  EXPECT_EQ(j["cameras"][0]["mount"], "gripper");
  ASSERT_EQ(j["joints"].size(), 1u);
  EXPECT_EQ(j["joints"][0]["label"], "door angle");
  // The label is the one the telemetry's aux entry carries for the hinge's reading.
  TelemetrySample sample;
  sample.aux = {0.3};
  const nlohmann::json t =
      telemetry_message("left", sample, nullptr, nullptr, -1.0, nullptr, &scene);
  ASSERT_EQ(t["aux"].size(), 1u);
  EXPECT_EQ(t["aux"][0]["name"], j["joints"][0]["label"]);
}

// The visual target's tag reaches the page with its printed cells, so the 3-D view shows the
// fiducial the cameras see: the white margin, the black square inside it, the 6 × 6 data
// cells between, each id its own.
TEST(SceneJson, CarriesATaggedBodysTagWithItsPrintedCells) {
  const ArmModel arm = load_default_arm();
  remote::SimulationOptions options;
  options.scene = remote::SceneKind::kVisualTarget;
  std::map<int, std::string> cells_of;
  for (const int id : {7, 8}) {
    options.visual_target.tag_id = id;
    const remote::SimulatedArm sim(arm, options);
    const nlohmann::json j = scene_json(sim.scene_description());
    const auto target = std::find_if(j["bodies"].begin(), j["bodies"].end(),
                                     [](const nlohmann::json& b) { return b.contains("tag"); });
    ASSERT_NE(target, j["bodies"].end());
    EXPECT_EQ((*target)["name"], "visual_target");
    EXPECT_EQ((*target)["tag"]["id"], id);
    EXPECT_DOUBLE_EQ((*target)["tag"]["size"].get<double>(), options.visual_target.size);
    const std::string cells = (*target)["tag"]["cells"];
    ASSERT_EQ(cells.size(), 100u);
    for (int row = 0; row < 10; ++row) {
      for (int col = 0; col < 10; ++col) {
        const int ring = std::min({row, col, 9 - row, 9 - col});
        const char cell = cells[static_cast<std::size_t>(10 * row + col)];
        // The margin white, the black square's border black; the data cells either.
        const char expected = ring == 0 ? '1' : ring == 1 ? '0' : cell;
        EXPECT_TRUE(cell == '0' || cell == '1') << cell;
        EXPECT_EQ(cell, expected) << "row " << row << ", column " << col;
      }
    }
    cells_of[id] = cells;
  }
  EXPECT_NE(cells_of[7], cells_of[8]);
  // The door's bodies carry no tag.
  const remote::SimulatedArm door(arm, remote::SimulationOptions{});
  for (const auto& b : scene_json(door.scene_description())["bodies"]) {
    EXPECT_FALSE(b.contains("tag")) << b["name"];
  }
}

}  // namespace
}  // namespace tether::local::web
