// Task commands (local_site/commands, task_command.h): the shipped commands expand and
// validate on both arms, each argument lands at its field, bad arguments and broken command
// files are refused with what is wrong and where, and the diff against a shipped task lists
// exactly what changed.
#include "tether/local/commands/task_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>

#include "tether/common/kinematics.h"
#include "tether/local/console/preview.h"
#include "tether/proto/task_diff.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/validation.h"

namespace tether::local {
namespace {

const CommandLibrary& shipped() {
  static const CommandLibrary library = CommandLibrary::load(TETHER_COMMANDS_DIR);
  return library;
}

const TaskCommand& command(const std::string& name) {
  const TaskCommand* c = shipped().find(name);
  if (c == nullptr) throw std::runtime_error("no shipped command " + name);
  return *c;
}

const KinematicModel& arm(const std::string& name = "iiwa7") {
  static const KinematicModel iiwa7(load_preview_arm("iiwa7"));
  static const KinematicModel panda(load_preview_arm("panda"));
  return name == "panda" ? panda : iiwa7;
}

TaskParameters expanded(const std::string& name, const ArgumentValues& arguments) {
  return expand(command(name), arguments, arm()).task;
}

// The message of the CommandArgumentError that expanding throws ("" if none).
std::string argument_error(const std::string& name, const ArgumentValues& arguments) {
  try {
    expanded(name, arguments);
  } catch (const CommandArgumentError& e) {
    return e.what();
  }
  return "";
}

// A scratch folder per test process, removed at exit.
std::filesystem::path scratch() {
  struct Scratch {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("tether_commands_test_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
  };
  static const Scratch s;
  return s.dir;
}

std::string write(const std::string& folder, const std::string& file, const std::string& text) {
  const std::filesystem::path dir = scratch() / folder;
  std::filesystem::create_directories(dir);
  const std::string path = (dir / file).string();
  std::ofstream(path) << text;
  return path;
}

// The problems of loading `path` (empty if it loads).
std::string file_error(const std::string& path) {
  try {
    load_task_command(path);
  } catch (const CommandFileError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A small valid command on the free scene, for the file checks: `press --limit N` writes the
// force bound (the range lets a value through that validation refuses).
const char* const kPressHead =
    "name: \"press\"\n"                            // 1
    "summary: \"a test command\"\n"                // 2
    "scene: \"free\"\n"                            // 3
    "task { force_control { enabled: true } }\n";  // 4
const char* const kPressLimit =
    "arguments {\n"                                    // 5
    "  name: \"limit\"\n"                              // 6
    "  help: \"force bound\"\n"                        // 7
    "  unit: \"N\"\n"                                  // 8
    "  number {\n"                                     // 9
    "    default_value: 20\n"                          // 10
    "    min: -10\n"                                   // 11
    "    max: 40\n"                                    // 12
    "    bindings { path: \"bounds.max_force_n\" }\n"  // 13
    "  }\n"                                            // 14
    "}\n";                                             // 15

// ---- the shipped commands ----

TEST(TaskCommands, TheShippedFolderHoldsOpenDoorPolishAndTrack) {
  EXPECT_EQ(shipped().names(), "open-door, polish, track");
  EXPECT_EQ(command("open-door").scene, "door");
  EXPECT_EQ(command("polish").scene, "wall");
  EXPECT_EQ(command("track").scene, "target");
}

TEST(TaskCommands, EveryShippedCommandAndEveryChoiceExpandsWithDefaultsAndValidatesOnBothArms) {
  for (const TaskCommand& c : shipped().commands()) {
    std::vector<ArgumentValues> trials{{}};
    for (const CommandArgument& a : c.arguments) {
      for (const ArgumentChoice& choice : a.choices) trials.push_back({{a.name, choice.name}});
    }
    for (const char* arm_name : {"iiwa7", "panda"}) {
      for (const ArgumentValues& trial : trials) {
        std::string with = c.name;
        for (const auto& [name, value] : trial) with += " --" + name + " " + value;
        try {
          const Expansion e = expand(c, trial, arm(arm_name));
          EXPECT_TRUE(valid_task_name(e.task.name)) << e.task.name;
          EXPECT_TRUE(validate_task(e.task, arm(arm_name)).empty()) << with;
        } catch (const std::exception& e) {
          ADD_FAILURE() << with << " on " << arm_name << ": " << e.what();
        }
      }
    }
  }
}

TEST(TaskCommands, EachArgumentIsListedWithItsUnitDefaultAndRange) {
  const std::string list = format_command_list(shipped());
  for (const char* line :
       {"open-door: opens the hinged door", "(scene door)", "--mode force|spring|shared",
        "--angle DEG  [deg] spring destination", "default 35, in [0, 90]; only with --mode spring",
        "--torque NM  [N·m]", "--period S  [s]", "polish: presses the gripper tip",
        "--force N  [N] normal force", "default 10, in [0.5, 30]"}) {
    EXPECT_TRUE(contains(list, line)) << "missing '" << line << "' in\n" << list;
  }
}

// ---- open-door ----

TEST(OpenDoor, SpringModeRotatesTheDestinationAboutTheHingeWithNoReferenceWrench) {
  const Expansion e = expand(command("open-door"), {{"mode", "spring"}, {"angle", "35"}}, arm());
  const TaskParameters& t = e.task;
  EXPECT_TRUE(t.spring_trajectory.enabled);
  EXPECT_TRUE(t.spring_trajectory.relative);
  const Matrix3 expected(Eigen::AngleAxisd(35.0 * std::numbers::pi / 180.0, Vector3::UnitX()));
  EXPECT_LT((t.spring_trajectory.destination.R - expected).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT(t.spring_trajectory.destination.p.norm(), 1e-12);
  EXPECT_TRUE(t.force_control.enabled);
  EXPECT_EQ(t.force_control.reference_wrench, Vector6::Zero());
  EXPECT_FALSE(t.teleoperation.enabled);
  EXPECT_NEAR(t.bounds.max_rotation_deviation, 0.7, 1e-12);  // follows the angle
  EXPECT_EQ(t.name, "open-door_spring_angle35");
  EXPECT_EQ(e.command_line, "open-door --mode spring --angle 35");
  const std::vector<std::pair<std::string, std::string>> values = {
      {"mode", "spring"}, {"angle", "35"}, {"period", "0.001"}};
  EXPECT_EQ(e.values, values);  // --torque takes no part in spring mode
}

TEST(OpenDoor, ForceModeWritesTheReferenceTorqueAboutTheHinge) {
  const TaskParameters t = expanded("open-door", {{"mode", "force"}, {"torque", "12.5"}});
  Vector6 expected = Vector6::Zero();
  expected[3] = 12.5;  // torque about MOTION X, the hinge
  EXPECT_EQ(t.force_control.reference_wrench, expected);
  EXPECT_FALSE(t.spring_trajectory.enabled);
  EXPECT_EQ(t.impedance.stiffness.head<6>(), Vector6::Zero());
  EXPECT_EQ(t.name, "open-door_force_torque12.5");
}

TEST(OpenDoor, SharedModeLetsTheOperatorDriveOnlyTheRotationAboutTheHinge) {
  const TaskParameters t = expanded("open-door", {{"mode", "shared"}});
  EXPECT_TRUE(t.teleoperation.enabled);
  MotionVector gain = MotionVector::Zero();
  gain[3] = 83.0;
  EXPECT_EQ(t.teleoperation.gain, gain);
  EXPECT_EQ(t.force_control.reference_wrench, Vector6::Zero());
  EXPECT_EQ(t.bounds.max_consecutive_overruns, 20);
}

TEST(OpenDoor, ThePeriodComesWithTheWrenchFilterThatSuitsIt) {
  const TaskParameters slow = expanded("open-door", {{"period", "0.020"}});  // = 0.02
  EXPECT_DOUBLE_EQ(slow.period, 0.02);
  EXPECT_EQ(slow.wrench_sensor.filter_cutoff, 0.0);
  EXPECT_EQ(slow.name, "open-door_period0.02");
  const TaskParameters fast = expanded("open-door", {});
  EXPECT_DOUBLE_EQ(fast.period, 0.001);
  EXPECT_EQ(fast.wrench_sensor.filter_cutoff, 20.0);
  EXPECT_EQ(argument_error("open-door", {{"period", "0.01"}}),
            "--period = 0.01: not a choice; allowed: 0.001 or 0.02");
}

TEST(OpenDoor, WithItsDefaultsEachModeIsTheShippedDoorTaskOfItsName) {
  for (const std::string mode : {"force", "spring", "shared"}) {
    const TaskParameters shipped_task =
        proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_" + mode + ".textproto");
    const auto differences =
        proto::diff_tasks(shipped_task, expanded("open-door", {{"mode", mode}}));
    ASSERT_EQ(differences.size(), 1u) << mode << ":\n" << proto::format_differences(differences);
    EXPECT_EQ(differences[0].path.to_string(), "name");
    EXPECT_EQ(differences[0].from, "\"door_" + mode + "\"");
    EXPECT_EQ(differences[0].to, "\"open-door_" + mode + "\"");
  }
}

TEST(OpenDoor, AtTwentyMillisecondsEachModeIsTheShippedTwentyMillisecondTask) {
  for (const std::string mode : {"force", "spring", "shared"}) {
    const std::string path = std::string(TETHER_TASK_DIR) + "/door_" + mode + "_20ms.textproto";
    const auto differences = proto::diff_tasks(
        proto::load_task_file(path), expanded("open-door", {{"mode", mode}, {"period", "0.02"}}));
    ASSERT_EQ(differences.size(), 1u) << mode << ":\n" << proto::format_differences(differences);
    EXPECT_EQ(differences[0].path.to_string(), "name");
  }
}

TEST(OpenDoor, TheDiffAgainstTheShippedSpringTaskListsExactlyTheChangedFields) {
  const TaskParameters door_spring =
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/door_spring.textproto");
  const auto differences =
      proto::diff_tasks(door_spring, expanded("open-door", {{"mode", "spring"}, {"angle", "40"}}));
  EXPECT_EQ(proto::format_differences(differences),
            "  name: \"door_spring\" → \"open-door_spring_angle40\"\n"
            "  spring_trajectory.destination.rotation: rpy { roll_deg: 35 } → "
            "rpy { roll_deg: 40 }\n"
            "  bounds.max_rotation_deviation_rad: 0.7 → 0.8\n");
}

// ---- polish ----

TEST(Polish, PressesWithTheForceAlongTheNormalAndTeleoperatesOnlyAlongTheSurface) {
  const TaskParameters t = expanded("polish", {{"force", "12.5"}, {"hand-scale", "0.5"}});
  Vector6 wrench = Vector6::Zero();
  wrench[2] = 12.5;  // MOTION +z: into the surface
  EXPECT_TRUE(t.force_control.enabled);
  EXPECT_EQ(t.force_control.reference_wrench, wrench);
  MotionVector gain = MotionVector::Zero();
  gain[0] = gain[1] = 1000.0;  // 0.5 · B, zero along the normal and in rotation
  EXPECT_TRUE(t.teleoperation.enabled);
  EXPECT_EQ(t.teleoperation.gain, gain);
  EXPECT_TRUE(t.manipulability.enabled);
  EXPECT_TRUE(t.joint_limit_avoidance.enabled);
  EXPECT_TRUE(t.obstacle_avoidance.enabled);
  EXPECT_TRUE(t.singularity_avoidance.enabled);
  EXPECT_EQ(t.impedance.stiffness.head<3>(), Vector3::Zero());
  EXPECT_EQ(t.name, "polish_force12.5_hand-scale0.5");
}

TEST(Polish, PreviewsWithoutABreachOnTheWallScene) {
  const TaskCommand& polish = command("polish");
  PreviewOptions options;
  options.scene = polish.scene;
  options.duration = polish.preview_duration;
  const PreviewReport report = preview_task(expanded("polish", {}), options);
  EXPECT_FALSE(report.breach) << format_preview(report);
  // The tip reached the surface and presses with the force asked for.
  EXPECT_NEAR(report.peak_force, 10.0, 1.0) << format_preview(report);
}

// ---- bad arguments ----

TEST(TaskCommands, AnOutOfRangeNumberIsRefusedWithTheArgumentTheValueAndTheRange) {
  try {
    expanded("polish", {{"force", "31"}});
    FAIL() << "expanded";
  } catch (const CommandArgumentError& e) {
    EXPECT_STREQ(e.what(), "--force = 31: outside the allowed range [0.5, 30] N");
    EXPECT_EQ(e.argument(), "force");
    EXPECT_EQ(e.value(), "31");
  }
  EXPECT_EQ(argument_error("open-door", {{"mode", "spring"}, {"angle", "-1"}}),
            "--angle = -1: outside the allowed range [0, 90] deg");
}

TEST(TaskCommands, ANumberThatIsNotANumberIsRefusedWithTheRange) {
  EXPECT_EQ(argument_error("polish", {{"force", "ten"}}),
            "--force = 'ten': not a number; allowed: [0.5, 30] N");
  EXPECT_EQ(argument_error("polish", {{"force", "nan"}}),
            "--force = 'nan': not a number; allowed: [0.5, 30] N");
  EXPECT_EQ(argument_error("polish", {{"force", "10N"}}),
            "--force = '10N': not a number; allowed: [0.5, 30] N");
}

TEST(TaskCommands, AnUnknownChoiceIsRefusedWithTheChoices) {
  EXPECT_EQ(argument_error("open-door", {{"mode", "pull"}}),
            "--mode = 'pull': not a choice; allowed: force, spring or shared");
}

TEST(TaskCommands, AnUnknownArgumentIsRefusedWithTheCommandsArguments) {
  EXPECT_EQ(argument_error("open-door", {{"speed", "3"}}),
            "--speed = 3: 'open-door' has no such argument; its arguments: --mode, --angle, "
            "--torque, --period");
}

TEST(TaskCommands, AnArgumentOfAnotherModeIsRefusedRatherThanIgnored) {
  EXPECT_EQ(argument_error("open-door", {{"angle", "35"}}),
            "--angle = 35: applies only with --mode spring, not --mode force");
  EXPECT_EQ(argument_error("open-door", {{"mode", "spring"}, {"torque", "5"}}),
            "--torque = 5: applies only with --mode force, not --mode spring");
}

TEST(TaskCommands, ASetTheArmCannotRunNamesTheArgumentThatSetTheField) {
  const std::string path = write("press", "press.textproto", std::string(kPressHead) + kPressLimit);
  const TaskCommand press = load_task_command(path);
  try {
    expand(press, {{"limit", "-5"}}, arm());
    FAIL() << "expanded";
  } catch (const TaskValidationError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_TRUE(contains(e.issues()[0].message, "bounds.max_force_n = -5: must be > 0"))
        << e.issues()[0].message;
    EXPECT_TRUE(contains(e.issues()[0].message, "(set by --limit -5)")) << e.issues()[0].message;
  }
}

// ---- names ----

TEST(TaskCommands, TheTaskIsNamedAfterTheCommandItsChoicesAndTheNumbersGiven) {
  EXPECT_EQ(task_name(command("open-door"), {}), "open-door");
  EXPECT_EQ(task_name(command("open-door"), {{"mode", "force"}}), "open-door_force");
  EXPECT_EQ(task_name(command("open-door"), {{"mode", "spring"}, {"angle", "40.0"}}),
            "open-door_spring_angle40");
  EXPECT_EQ(expand(command("polish"), {}, arm(), "my_polish").task.name, "my_polish");
  EXPECT_THROW(expand(command("polish"), {}, arm(), "../etc"), std::invalid_argument);
}

TEST(TaskCommands, ALongNameIsShortenedWithAHashSoDifferentArgumentsStayDifferent) {
  std::string text = std::string(kPressHead);
  for (const char* name :
       {"first-long-argument-name", "second-long-argument-name", "third-long-argument-name"}) {
    text += std::string("arguments { name: \"") + name +
            "\" help: \"h\" number { default_value: 1 min: 0 max: 1000000 "
            "bindings { path: \"bounds.max_force_n\" } } }\n";
  }
  const TaskCommand press = load_task_command(write("long", "press.textproto", text));
  const ArgumentValues a = {{"first-long-argument-name", "100000"},
                            {"second-long-argument-name", "200000"},
                            {"third-long-argument-name", "300000"}};
  ArgumentValues b = a;
  b["third-long-argument-name"] = "300001";
  const std::string name_a = task_name(press, a);
  const std::string name_b = task_name(press, b);
  EXPECT_LE(name_a.size(), kMaxTaskNameLength);
  EXPECT_TRUE(valid_task_name(name_a)) << name_a;
  EXPECT_NE(name_a, name_b);
}

// ---- command files ----

TEST(CommandFiles, AnUnknownPathIsRefusedAtItsPlaceInTheFile) {
  std::string text = std::string(kPressHead) + kPressLimit;
  text.replace(text.find("bounds.max_force_n"), 18, "bounds.max_forse_n");
  const std::string error = file_error(write("unknown_path", "press.textproto", text));
  EXPECT_TRUE(contains(error,
                       "press.textproto:13:16: arguments[0].number.bindings[0].path: "
                       "bounds.max_forse_n: bounds has no field 'max_forse_n'"))
      << error;
}

TEST(CommandFiles, ADefaultOutsideItsRangeIsRefusedAtItsPlaceInTheFile) {
  std::string text = std::string(kPressHead) + kPressLimit;
  text.replace(text.find("default_value: 20"), 17, "default_value: 50");
  const std::string error = file_error(write("default_range", "press.textproto", text));
  EXPECT_TRUE(contains(error,
                       "press.textproto:10:5: arguments[0].number.default_value = 50: "
                       "outside the allowed range [-10, 40]"))
      << error;
}

TEST(CommandFiles, EveryProblemOfAFileIsReportedAtOnce) {
  const std::string text = std::string(kPressHead) + kPressLimit +  // lines 1-15
                           "arguments {\n"                          // 16
                           "  name: \"limit\"\n"                    // 17
                           "  help: \"again\"\n"                    // 18
                           "  choice { choices { name: \"a\" } default_choice: \"b\" }\n"  // 19
                           "}\n"                                                           // 20
                           "arguments {\n"                                                 // 21
                           "  name: \"print\"\n"                                           // 22
                           "  help: \"reserved\"\n"                                        // 23
                           "  only_with { argument: \"limit\" choices: \"c\" }\n"          // 24
                           "  choice { choices { name: \"x\" settings { path: \"teleoperation\" "
                           "value: \"enabled: maybe\" } } }\n"  // 25
                           "}\n";
  const std::string error = file_error(write("many", "press.textproto", text));
  for (const char* problem :
       {"press.textproto:17:3: arguments[1].name = 'limit': given twice",
        "press.textproto:19:34: arguments[1].choice.default_choice = 'b': not one of its choices",
        "press.textproto:22:3: arguments[2].name = 'print': reserved",
        "press.textproto:25:",  // the setting whose value does not parse
        "arguments[2].choice.choices[0].settings[0].path: teleoperation = 'enabled: maybe'"}) {
    EXPECT_TRUE(contains(error, problem)) << "missing '" << problem << "' in\n" << error;
  }
}

TEST(CommandFiles, TheFileMustBeNamedAfterItsCommandAndNameAKnownScene) {
  std::string text = std::string(kPressHead) + kPressLimit;
  text.replace(text.find("\"free\""), 6, "\"kitchen\"");
  const std::string error = file_error(write("misnamed", "squeeze.textproto", text));
  EXPECT_TRUE(contains(error,
                       "squeeze.textproto:1:1: name = 'press': the file must be named "
                       "press.textproto"))
      << error;
  EXPECT_TRUE(contains(error, "squeeze.textproto:3:1: scene = 'kitchen'")) << error;
}

TEST(CommandFiles, ASyntaxErrorIsPlacedInTheFile) {
  const std::string error =
      file_error(write("syntax", "press.textproto", "name: \"press\"\nsumary: \"x\"\n"));
  EXPECT_TRUE(contains(error, "press.textproto:2:")) << error;
  EXPECT_TRUE(contains(error, "sumary")) << error;
}

TEST(CommandFiles, AFolderWithABrokenFileIsRefusedWholeListingEveryFilesProblems) {
  std::string broken = std::string(kPressHead) + kPressLimit;
  broken.replace(broken.find("max: 40"), 7, "max: -20");
  write("folder", "press.textproto", broken);
  write("folder", "other.textproto", "name: \"other\"\n");
  try {
    CommandLibrary::load((scratch() / "folder").string());
    FAIL() << "loaded";
  } catch (const CommandFileError& e) {
    const std::string error = e.what();
    EXPECT_TRUE(contains(error,
                         "press.textproto:12:5: arguments[0].number.max = -20 with min = "
                         "-10: the range must be finite with min ≤ max"))
        << error;
    EXPECT_TRUE(contains(error, "other.textproto: summary = ''")) << error;
    EXPECT_TRUE(contains(error, "other.textproto: task: missing")) << error;
  }
}

// A new command is a file in the folder and nothing else (as `track` was).
TEST(CommandFiles, ANewCommandIsOnlyAFileInTheFolder) {
  write("added", "press.textproto", std::string(kPressHead) + kPressLimit);
  const CommandLibrary library = CommandLibrary::load((scratch() / "added").string());
  ASSERT_NE(library.find("press"), nullptr);
  const Expansion e = expand(*library.find("press"), {{"limit", "30"}}, arm());
  EXPECT_DOUBLE_EQ(e.task.bounds.max_force, 30.0);
  EXPECT_EQ(e.task.name, "press_limit30");
}

TEST(Track, ExpandsToTheShippedVisualTrackingTaskAndTakesTheDistanceAndTimeout) {
  const TaskCommand* track = shipped().find("track");
  ASSERT_NE(track, nullptr);
  const Expansion e = expand(*track, {{"distance", "0.25"}, {"lost-timeout", "1"}}, arm());
  EXPECT_TRUE(e.task.visual_tracking.enabled);
  EXPECT_DOUBLE_EQ(e.task.visual_tracking.reference_position.z(), 0.25);
  EXPECT_DOUBLE_EQ(e.task.visual_tracking.lost_timeout, 1.0);
  // With its defaults it is the shipped task, but for the name.
  TaskParameters task = expand(*track, {}, arm()).task;
  task.name = "visual_tracking";
  EXPECT_TRUE(
      proto::diff_tasks(
          proto::load_task_file(std::string(TETHER_TASK_DIR) + "/visual_tracking.textproto"), task)
          .empty())
      << proto::format_differences(proto::diff_tasks(
             proto::load_task_file(std::string(TETHER_TASK_DIR) + "/visual_tracking.textproto"),
             task));
}

TEST(Polish, ExpandsWithItsDefaultsToTheShippedPolishingTask) {
  const TaskCommand* polish = shipped().find("polish");
  ASSERT_NE(polish, nullptr);
  TaskParameters task = expand(*polish, {}, arm()).task;
  task.name = "polish";
  const TaskParameters file =
      proto::load_task_file(std::string(TETHER_TASK_DIR) + "/polish.textproto");
  EXPECT_TRUE(proto::diff_tasks(file, task).empty())
      << proto::format_differences(proto::diff_tasks(file, task));
}

// ---- the diff ----

TEST(TaskDiff, ComparesRotationsAsRotationsAndDefaultsAsDefaults) {
  TaskParameters a;
  a.name = "a";
  TaskParameters b = a;
  b.tool_T_motion.R = Matrix3(Eigen::AngleAxisd(1e-12, Vector3::UnitZ()));  // the same rotation
  b.period = 0.002;
  const auto differences = proto::diff_tasks(a, b);
  EXPECT_EQ(proto::format_differences(differences), "  period_s: (default) → 0.002\n");
  EXPECT_EQ(proto::format_differences(proto::diff_tasks(a, a)), "  (no differences)\n");
}

}  // namespace
}  // namespace tether::local
