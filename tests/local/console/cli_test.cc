// The `tether` console binary: command line, help, exit codes, and the commands that need
// no remote site. Every remote address here is a closed port, so nothing is contacted.
#include "tether/local/console/cli.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "console_process.h"
#include "tether/local/console/recording.h"

namespace tether::local::console {
namespace {

using testing::contains;
using testing::Result;

std::string temp_dir() { return testing::scratch_dir(); }

Result tether(const std::string& args, const std::string& environment = "") {
  return testing::run_tether(args, environment);
}

const std::string kClosed = "--remote 127.0.0.1:1 --timeout 2s";

TEST(ConsoleCli, HelpListsEveryCommandAndTheExitCodes) {
  const Result r = tether("--help");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  for (const char* line :
       {"tether connect HOST:PORT", "tether status", "tether upload FILE", "tether list",
        "tether show NAME", "tether delete NAME", "tether start NAME [--wait-seconds T]",
        "tether stop", "tether reset", "tether set PATH VALUE", "tether record FILE",
        "tether plot FILE.csv OUT.png", "tether preview FILE", "--remote HOST:PORT",
        "--operator NAME", "--timeout T", "4  invalid task", "5  the preview predicts",
        "6  could not reach the remote"}) {
    EXPECT_TRUE(contains(r.output, line)) << "missing '" << line << "' in\n" << r.output;
  }
}

TEST(ConsoleCli, EveryCommandHasItsOwnHelp) {
  for (const char* command : {"connect", "status", "upload", "list", "show", "delete", "start",
                              "stop", "reset", "set", "teleop", "record", "plot", "preview"}) {
    const Result r = tether(std::string(command) + " --help");
    EXPECT_EQ(r.code, kExitOk) << command << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, std::string("usage: tether [global options] ") + command))
        << r.output;
  }
  EXPECT_TRUE(contains(tether("upload --help").output, "--no-preview"));
  EXPECT_TRUE(contains(tether("help record").output, "--decimation N"));
}

TEST(ConsoleCli, AnUnknownCommandIsAUsageError) {
  const Result r = tether("frobnicate");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "unknown command 'frobnicate'")) << r.output;
}

TEST(ConsoleCli, AnUnknownOptionOrAMissingArgumentIsAUsageError) {
  Result r = tether("upload --bogus task.textproto");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "unknown option '--bogus' for `tether upload`")) << r.output;
  r = tether("show");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "usage: tether show NAME")) << r.output;
  r = tether("record out.csv --decimation 0");
  EXPECT_EQ(r.code, kExitUsage);
  r = tether("");
  EXPECT_EQ(r.code, kExitUsage);
  r = tether("preview --scene kitchen task.textproto");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "--scene 'kitchen': expected free, door")) << r.output;
}

TEST(ConsoleCli, AnInvalidTaskIsRefusedLocallyNamingTheField) {
  const Result r =
      tether(kClosed + " upload " TETHER_SOURCE_DIR "/tests/remote/scenarios/bad_task.textproto");
  EXPECT_EQ(r.code, kExitInvalidTask) << r.output;
  EXPECT_TRUE(contains(r.output, "impedance.mass.rotation.x = -2: must be finite and > 0")) << r.output;
  EXPECT_FALSE(contains(r.output, "cannot reach")) << r.output;  // never got that far
}

TEST(ConsoleCli, AMalformedTaskFileIsAnInvalidTask) {
  const std::string path = temp_dir() + "/broken.textproto";
  std::ofstream(path) << "name: \"x\"\nimpedance { mass { translation { x: \"ten\" } } }\n";
  const Result r = tether(kClosed + " upload " + path);
  EXPECT_EQ(r.code, kExitInvalidTask) << r.output;
  EXPECT_TRUE(contains(r.output, "broken.textproto:2")) << r.output;
}

TEST(ConsoleCli, PreviewPredictsTheBreachOfATooTightBound) {
  const Result r = tether("preview --scene door " TETHER_SOURCE_DIR
                          "/tests/local/console/tight_bounds.textproto");
  EXPECT_EQ(r.code, kExitBreachPredicted) << r.output;
  EXPECT_TRUE(contains(r.output, "PREDICTED BREACH")) << r.output;
  EXPECT_TRUE(contains(r.output, "exceeds the bound 2 N")) << r.output;
}

TEST(ConsoleCli, UploadRefusesAPredictedBreachBeforeContactingTheRemote) {
  const Result r = tether(kClosed + " upload --scene door " TETHER_SOURCE_DIR
                                    "/tests/local/console/tight_bounds.textproto");
  EXPECT_EQ(r.code, kExitBreachPredicted) << r.output;
  EXPECT_TRUE(contains(r.output, "not uploading 'door_tight'")) << r.output;
}

TEST(ConsoleCli, AClosedPortIsUnreachable) {
  Result r = tether(kClosed + " status");
  EXPECT_EQ(r.code, kExitUnreachable) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot reach the remote site")) << r.output;
  // --force skips the preview's verdict, not the remote.
  r = tether(kClosed + " upload --no-preview " TETHER_SOURCE_DIR
                       "/remote_site/tasks/door_force.textproto");
  EXPECT_EQ(r.code, kExitUnreachable) << r.output;
}

TEST(ConsoleCli, TakesTheRemoteFromTheEnvironment) {
  const Result r = tether("--timeout 2s list", "TETHER_REMOTE=127.0.0.1:1");
  EXPECT_EQ(r.code, kExitUnreachable) << r.output;
  EXPECT_TRUE(contains(r.output, "127.0.0.1:1")) << r.output;
}

TEST(ConsoleCli, PlotsARecordingWithoutARemote) {
  const std::string csv = temp_dir() + "/recording.csv";
  const std::string png = temp_dir() + "/recording.png";
  {
    std::ofstream file(csv);
    RecordingWriter writer(file);
    for (int k = 0; k < 100; ++k) {
      TelemetrySample s;
      s.arm_time = 0.01 * k;
      s.task_name = "door_force";
      s.aux = {0.005 * k};
      writer.write(s);
    }
  }
  const Result r = tether(kClosed + " plot " + csv + " " + png);
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "plotted 100 samples")) << r.output;
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
}

}  // namespace
}  // namespace tether::local::console
