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

// Plaintext (TETHER_INSECURE): these tests are about the command line against closed ports;
// credentials have tests of their own below and the end-to-end suite runs over mutual TLS.
Result tether(const std::string& args, const std::string& environment = "") {
  return testing::run_tether(args, "TETHER_INSECURE=1 " + environment);
}

const std::string kClosed = "--remote 127.0.0.1:1 --timeout 2s";

TEST(ConsoleCli, HelpListsEveryCommandTheGlobalOptionsAndTheExitCodes) {
  const Result r = tether("--help");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  for (const char* line : {"usage: tether [global options] COMMAND [options] [arguments]",
                           "tether connect HOST:PORT",
                           "tether status",
                           "tether upload FILE",
                           "tether list",
                           "tether show NAME",
                           "tether delete NAME",
                           "tether start NAME [--wait-seconds T]",
                           "tether stop",
                           "tether reset",
                           "tether set PATH VALUE",
                           "tether record FILE",
                           "tether teleop [--device SPEC]",
                           "tether plot FILE.csv OUT.png",
                           "tether preview FILE",
                           "tether help [COMMAND]",
                           "global options (before or after the command):",
                           "--remote HOST:PORT",
                           "--operator NAME",
                           "--timeout T",
                           "--version",
                           "exit status:",
                           "2  usage error",
                           "4  invalid task",
                           "5  the preview predicts",
                           "6  could not reach the remote"}) {
    EXPECT_TRUE(contains(r.output, line)) << "missing '" << line << "' in\n" << r.output;
  }
}

TEST(ConsoleCli, PrintsItsVersion) {
  const Result r = tether("--version");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_EQ(r.output, std::string("tether ") + TETHER_VERSION + "\n");
}

TEST(ConsoleCli, EveryCommandHasItsOwnHelp) {
  for (const char* command : {"connect", "status", "upload", "list", "show", "delete", "start",
                              "stop", "reset", "set", "teleop", "record", "plot", "preview"}) {
    const Result r = tether(std::string(command) + " --help");
    EXPECT_EQ(r.code, kExitOk) << command << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, std::string("usage: tether [global options] ") + command))
        << r.output;
    // The global options and the exit statuses apply to every command.
    EXPECT_TRUE(contains(r.output, "--remote HOST:PORT")) << r.output;
    EXPECT_TRUE(contains(r.output, "6  could not reach the remote")) << r.output;
  }
  const Result upload = tether("upload --help");
  for (const char* line : {"--no-preview", "--name N", "--scene S", "--duration T", "FILE"}) {
    EXPECT_TRUE(contains(upload.output, line)) << "missing '" << line << "' in\n" << upload.output;
  }
  EXPECT_TRUE(contains(tether("help record").output, "--decimation N"));
  EXPECT_EQ(tether("help upload").output, upload.output);
  EXPECT_EQ(tether("--help upload").output, upload.output);
}

TEST(ConsoleCli, AnUnknownCommandIsAUsageError) {
  Result r = tether("frobnicate");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "tether: unknown command 'frobnicate'")) << r.output;
  EXPECT_TRUE(contains(r.output, "`tether --help` lists the commands and options")) << r.output;
  r = tether("help frobnicate");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "COMMAND: 'frobnicate': expected connect, status, upload"))
      << r.output;
  r = tether("");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "tether: a command is required")) << r.output;
}

TEST(ConsoleCli, AnUnknownOptionOrAMissingArgumentIsAUsageErrorShowingTheCommandsUsage) {
  Result r = tether("upload --bogus task.textproto");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "not expected: --bogus")) << r.output;
  EXPECT_TRUE(contains(r.output, "usage: tether [global options] upload FILE")) << r.output;
  EXPECT_TRUE(contains(r.output, "`tether upload --help` lists the options")) << r.output;
  r = tether("show");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "tether: NAME is required")) << r.output;
  EXPECT_TRUE(contains(r.output, "usage: tether [global options] show NAME")) << r.output;
  r = tether("show a b");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.output, "not expected: b")) << r.output;
  r = tether("show NAME --json=yes");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_TRUE(contains(r.output, "--json")) << r.output;
}

TEST(ConsoleCli, ABadValueIsAUsageErrorNamingTheOptionTheValueAndTheRange) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {
           Case{"record out.csv --decimation 0",
                "--decimation: '0': expected a whole number in [1, 1000000]"},
           Case{"record out.csv --decimation=ten",
                "--decimation: 'ten': expected a whole number in [1, 1000000]"},
           Case{"record out.csv --duration 0s",
                "--duration: '0s': expected a time in (0, 1000000] s"},
           Case{"start door --wait-seconds 3min",
                "--wait-seconds: '3min': expected a time in (0, 1000000] s"},
           Case{"--timeout -1 status", "--timeout: '-1': expected a time in (0, 1000000] s"},
           Case{"preview --scene kitchen task.textproto",
                "--scene: 'kitchen': expected free, door, wall, obstacles, proximity or target"},
           Case{"preview --arm ur5 task.textproto", "--arm: arm 'ur5': expected iiwa7 or panda"},
           Case{"teleop --mode sideways", "--mode: 'sideways': expected tool, world or camera"},
           Case{"teleop --reflect all", "--reflect: 'all': expected none, measured or error"},
           Case{"--remote localhost status", "--remote: 'localhost': no ':' before the port"},
           Case{"connect 127.0.0.1:99999", "ADDRESS: '127.0.0.1:99999': bad port '99999'"},
           Case{"--operator '' status", "--operator: must not be empty"},
       }) {
    const Result r = tether(c.args);
    EXPECT_EQ(r.code, kExitUsage) << c.args << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, std::string("tether: ") + c.message))
        << c.args << ": missing '" << c.message << "' in\n"
        << r.output;
  }
}

TEST(ConsoleCli, GlobalOptionsGoBeforeOrAfterTheCommandInEitherSpelling) {
  for (const std::string args :
       {"--remote 127.0.0.1:1 --timeout 2s status", "status --remote 127.0.0.1:1 --timeout 2s",
        "--remote=127.0.0.1:1 status --timeout=2000ms"}) {
    const Result r = tether(args);
    // Parsed, then the closed port: unreachable, not a usage error.
    EXPECT_EQ(r.code, kExitUnreachable) << args << ":\n" << r.output;
  }
}

TEST(ConsoleCli, ANegativeNumberIsAValueNotAnOption) {
  for (const char* value : {"-5", "-0.5", "-.5"}) {
    const Result r = tether(kClosed + " set force_control.reference_wrench.force.z " + value);
    EXPECT_EQ(r.code, kExitUnreachable) << value << ":\n" << r.output;
  }
}

TEST(ConsoleCli, AnInvalidTaskIsRefusedLocallyNamingTheField) {
  const Result r =
      tether(kClosed + " upload " TETHER_SOURCE_DIR "/tests/remote/scenarios/bad_task.textproto");
  EXPECT_EQ(r.code, kExitInvalidTask) << r.output;
  EXPECT_TRUE(contains(r.output, "impedance.mass.rotation.x = -2: must be finite and > 0"))
      << r.output;
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

TEST(ConsoleCli, WithoutCredentialsNamesWhatToGiveAndCallsNothing) {
  const Result r = testing::run_tether(kClosed + " status");
  EXPECT_EQ(r.code, kExitError) << r.output;
  EXPECT_TRUE(contains(r.output, "no credentials for 127.0.0.1:1: give --ca, --cert and --key"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "cannot reach")) << r.output;
}

TEST(ConsoleCli, TakesCredentialsFromTheDefaultConfigFileAndNamesAMissingFile) {
  const std::string config = temp_dir() + "/config/tether";
  std::filesystem::create_directories(config);
  std::ofstream(config + "/tether.conf") << "ca = \"" << temp_dir() << "/missing-ca.pem\"\n"
                                         << "cert = \"/nonexistent/cert.pem\"\n"
                                         << "key = \"/nonexistent/key.pem\"\n";
  Result r = testing::run_tether(kClosed + " status");
  EXPECT_EQ(r.code, kExitError) << r.output;
  EXPECT_TRUE(contains(r.output, "missing-ca.pem': cannot be read")) << r.output;
  std::ofstream(config + "/tether.conf") << "insecure = true\n";
  r = testing::run_tether(kClosed + " status");
  EXPECT_EQ(r.code, kExitUnreachable) << r.output;
  std::filesystem::remove(config + "/tether.conf");
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
