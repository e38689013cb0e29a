// `tether do`, the console's task commands, run as the real binary: listing, per-command
// help, expansion, diff, preview, refused arguments and broken command folders. Every remote
// address here is a closed port, so nothing is contacted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "console_process.h"
#include "tether/local/console/cli.h"

namespace tether::local::console {
namespace {

using testing::contains;
using testing::Result;

Result tether(const std::string& args, const std::string& environment = "") {
  return testing::run_tether(args, "TETHER_INSECURE=1 " + environment);
}

const std::string kClosed = "--remote 127.0.0.1:1 --timeout 2s";

TEST(ConsoleDo, ListsTheShippedCommandsWithTheirArguments) {
  const Result r = tether("do --list");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  for (const char* line : {"open-door: opens the hinged door", "--mode force|spring|shared",
                           "--angle DEG  [deg]", "--torque NM  [N·m]", "--period S  [s]",
                           "polish: presses the gripper tip", "--force N  [N]", "--hand-scale X"}) {
    EXPECT_TRUE(contains(r.output, line)) << "missing '" << line << "' in\n" << r.output;
  }
}

TEST(ConsoleDo, ACommandsHelpGivesEachArgumentsUnitDefaultAndRange) {
  const Result r = tether("do open-door --help");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  for (const char* line :
       {"usage: tether [global options] do", "open-door: opens the hinged door",
        "arguments of open-door", "--mode force|spring|shared", "default force",
        "spring: spring trajectory to --angle", "--angle DEG", "[deg] spring destination",
        "default 35, in [0, 90]; only with --mode spring", "--torque NM", "[N·m]",
        "default 18, in [0, 40]; only with --mode force", "--print", "--diff FILE"}) {
    EXPECT_TRUE(contains(r.output, line)) << "missing '" << line << "' in\n" << r.output;
  }
  EXPECT_TRUE(contains(tether("do --help").output, "--list")) << tether("do --help").output;
}

TEST(ConsoleDo, PrintsTheExpandedSetInTextFormat) {
  const Result r = tether("do open-door --mode spring --angle 40");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "# tether do open-door --mode spring --angle 40\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "name: \"open-door_spring_angle40\"")) << r.output;
  EXPECT_TRUE(contains(r.output, "spring_trajectory {")) << r.output;
  EXPECT_EQ(tether("do open-door --mode spring --angle 40 --print").output, r.output);
}

TEST(ConsoleDo, DiffsTheExpandedSetAgainstATaskFile) {
  const std::string file = TETHER_SOURCE_DIR "/remote_site/tasks/door_spring.textproto";
  const Result r = tether("do open-door --mode spring --angle 40 --diff " + file);
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_EQ(r.output, "--- " + file +
                          "\n"
                          "+++ tether do open-door --mode spring --angle 40\n"
                          "  name: \"door_spring\" → \"open-door_spring_angle40\"\n"
                          "  spring_trajectory.destination.rotation: rpy { roll_deg: 35 } → "
                          "rpy { roll_deg: 40 }\n"
                          "  bounds.max_rotation_deviation_rad: 0.7 → 0.8\n");
}

TEST(ConsoleDo, PreviewsOnTheCommandsScene) {
  const Result r = tether("do open-door --mode spring --preview --duration 1s");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "no breach predicted")) << r.output;
  EXPECT_TRUE(contains(r.output, "preview of task 'open-door_spring' on iiwa7, scene door"))
      << r.output;
}

TEST(ConsoleDo, ABadArgumentIsAUsageErrorNamingItsValueAndRange) {
  Result r = tether("do polish --force 31");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "tether: do polish: --force = 31: outside the allowed range "
                       "[0.5, 30] N"))
      << r.output;
  r = tether("do open-door --mode pull");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output, "--mode = 'pull': not a choice; allowed: force, spring or shared"))
      << r.output;
  r = tether("do open-door --angle 35");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output, "--angle = 35: applies only with --mode spring")) << r.output;
  r = tether("do open-door --bogus 3");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output, "--bogus")) << r.output;
}

TEST(ConsoleDo, AnUnknownOrMissingCommandIsAUsageErrorListingTheCommands) {
  Result r = tether("do frobnicate --angle 3");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output, "no task command 'frobnicate'")) << r.output;
  EXPECT_TRUE(contains(r.output, "commands: open-door, polish")) << r.output;
  r = tether("do");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output, "`tether do --list` lists them")) << r.output;
}

TEST(ConsoleDo, ABrokenCommandsFolderIsReportedWithFileAndField) {
  const std::string dir = testing::scratch_dir() + "/broken_commands";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/press.textproto")
      << "name: \"press\"\nsummary: \"s\"\nscene: \"free\"\ntask { }\n"
         "arguments { name: \"limit\" help: \"h\"\n"
         "  number { default_value: 50 min: 0 max: 40 bindings { path: \"bounds.max_force_n\" } } "
         "}\n";
  Result r = tether("do --commands " + dir + " --list");
  EXPECT_EQ(r.code, kExitError) << r.output;
  EXPECT_TRUE(contains(r.output, "the task commands in " + dir + " cannot be used (1 problem)"))
      << r.output;
  EXPECT_TRUE(contains(r.output,
                       "press.textproto:6:12: arguments[0].number.default_value = 50: "
                       "outside the allowed range [0, 40]"))
      << r.output;
  // The folder from the environment, and the command's own arguments still given.
  r = tether("do press --limit 20", "TETHER_COMMANDS_DIR=" + dir);
  EXPECT_EQ(r.code, kExitError) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot be used")) << r.output;
}

TEST(ConsoleDo, UploadsToTheRemoteAfterExpanding) {
  // A closed port: the expansion and preview happen here, the upload is what fails.
  const Result r = tether(kClosed + " do open-door --mode spring --upload --no-preview");
  EXPECT_EQ(r.code, kExitUnreachable) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot reach the remote site")) << r.output;
}

}  // namespace
}  // namespace tether::local::console
