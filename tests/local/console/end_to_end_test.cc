// The console against a real remote site: starts `tether-remote --serve` on a free port
// (door scene, real-time loop) and drives the `tether` binary through an operator's session.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "console_process.h"
#include "tether/common/units.h"
#include "tether/local/console/cli.h"
#include "tether/local/console/recording.h"

namespace tether::local::console {
namespace {

using testing::contains;
using testing::Result;

std::string temp_dir() { return testing::scratch_dir(); }

// `path`, after removing any file there (a port file left by an earlier run).
std::string without_file(const std::string& path) {
  std::filesystem::remove(path);
  return path;
}

// tether-remote --serve as a child process, its output in a log file; the port it bound
// comes from its --port-file. It is asked to end with SIGTERM, and killed after 5 s.
class RemoteSiteProcess {
 public:
  explicit RemoteSiteProcess(const std::string& scene = "door",
                             const std::vector<std::string>& more = {})
      : log_(temp_dir() + "/tether-remote.log"),
        port_file_(without_file(temp_dir() + "/port")),
        process_(TETHER_REMOTE_BIN, arguments(scene, port_file_, more), log_) {}

  ~RemoteSiteProcess() {
    process_.signal(SIGTERM);
    process_.wait_for(std::chrono::seconds(5));
  }

  // "127.0.0.1:PORT" once the site listens; empty if it exited or took longer than 30 s.
  std::string wait_for_address() {
    const int port =
        ::tether::testing::wait_for_port(process_, port_file_, std::chrono::seconds(30));
    return port > 0 ? "127.0.0.1:" + std::to_string(port) : std::string();
  }

  std::string log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  static std::vector<std::string> arguments(const std::string& scene, const std::string& port_file,
                                            const std::vector<std::string>& more) {
    std::vector<std::string> args = {
        "--serve", "127.0.0.1:0", "--scene", scene,      "--site",
        "e2e",     "--port-file", port_file, "--config", TETHER_TEST_PKI "/sites/remote.conf"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  std::string log_, port_file_;
  ::tether::testing::ChildProcess process_;
};

// A port number free on loopback for TCP at the moment (the kernel's choice, released).
int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

class ConsoleEndToEnd : public ::testing::Test {
 protected:
  Result tether(const std::string& args) {
    // Over mutual TLS as the person "operator" of the test PKI.
    return testing::run_tether("--config " TETHER_TEST_PKI "/people/operator.conf " + args);
  }
};

TEST_F(ConsoleEndToEnd, OpensTheDoorFromConnectToReset) {
  RemoteSiteProcess site;
  const std::string address = site.wait_for_address();
  ASSERT_FALSE(address.empty()) << "tether-remote did not report its port:\n" << site.log();

  Result r = tether("connect " + address);
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "connected to site")) << r.output;
  // From here on the saved address is the default remote.
  r = tether("status");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "state        idle")) << r.output;

  // The shipped door task, tolerant of missed deadlines: this test is about the console and
  // the service, and on a VM whose host steals CPU the real-time loop misses many in a row.
  std::ifstream shipped(TETHER_SOURCE_DIR "/remote_site/tasks/door_force.textproto");
  std::string text((std::istreambuf_iterator<char>(shipped)), std::istreambuf_iterator<char>());
  text.replace(text.find("bounds {"), 8, "bounds {\n  max_consecutive_overruns: 1000000");
  const std::string door_task =
      (std::filesystem::path(temp_dir()) / "door_force.textproto").string();
  std::ofstream(door_task) << text;
  r = tether("upload --scene door --name door_force " + door_task);
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "no breach predicted")) << r.output;
  EXPECT_TRUE(contains(r.output, "uploaded 'door_force'")) << r.output;

  r = tether("upload " TETHER_SOURCE_DIR "/tests/remote/scenarios/bad_task.textproto");
  EXPECT_EQ(r.code, kExitInvalidTask) << r.output;
  EXPECT_TRUE(contains(r.output, "impedance.mass.rotation.x = -2")) << r.output;

  r = tether("list");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "door_force")) << r.output;
  EXPECT_TRUE(contains(r.output, "force control")) << r.output;
  EXPECT_FALSE(contains(r.output, "bad")) << r.output;

  r = tether("start nonexistent");
  EXPECT_EQ(r.code, kExitRefused) << r.output;

  r = tether("start door_force --wait-seconds 0.5");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "'door_force' is running")) << r.output;

  const std::string csv = temp_dir() + "/door.csv";
  const std::string png = temp_dir() + "/door.png";
  r = tether("record " + csv + " --duration 3s --decimation 10");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  const Recording recording = read_recording(csv);
  ASSERT_GT(recording.rows, 100u) << r.output;  // ~300 at 1 kHz / 10
  double peak = -1.0;
  for (double a : recording.column("aux0")) peak = std::max(peak, a);
  EXPECT_GT(peak * kRadToDeg, 10.0) << "door angle (aux0) never passed 10 deg";

  r = tether("plot " + csv + " " + png);
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_GT(std::filesystem::file_size(png), 1000u);

  // Any value of the running task, negative numbers included, changes without a restart.
  r = tether("set force_control.reference_wrench.force.z -0.5");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  r = tether("set impedance.mass.rotation.x -1");
  EXPECT_EQ(r.code, kExitInvalidTask) << r.output;
  EXPECT_TRUE(contains(r.output, "impedance.mass.rotation.x = -1")) << r.output;

  r = tether("stop");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // stop_time_s is 0.3 s
  r = tether("status");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "state        stopped")) << r.output;
  EXPECT_TRUE(contains(r.output, "operator stop")) << r.output;

  r = tether("reset");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  r = tether("status");
  EXPECT_FALSE(contains(r.output, "state        stopped")) << r.output;
}

// The command-to-behaviour map through the pair: the console expands a task command, the
// remote site receives only the expanded set and runs it. Visual tracking on the served
// visual-target scene: the camera keeps the moving target in view, so the task runs on.
TEST_F(ConsoleEndToEnd, ATaskCommandIsExpandedUploadedAndRunByTheRemoteSite) {
  RemoteSiteProcess site("target");
  const std::string address = site.wait_for_address();
  ASSERT_FALSE(address.empty()) << "tether-remote did not report its port:\n" << site.log();
  Result r = tether("--remote " + address + " do track --distance 0.3 --name track_e2e --start");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "no breach predicted")) << r.output;
  EXPECT_TRUE(contains(r.output, "uploaded 'track_e2e'")) << r.output;
  // The remote holds the expanded set, not the command.
  r = tether("--remote " + address + " show track_e2e");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "visual_tracking")) << r.output;
  // A real-time loop on a loaded machine may miss deadlines; allow that, not losing the target.
  r = tether("--remote " + address + " set bounds.max_consecutive_overruns 1000000");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  r = tether("--remote " + address + " status");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "state        running")) << r.output;
  EXPECT_TRUE(contains(r.output, "breach       none")) << r.output;
  r = tether("--remote " + address + " stop");
  EXPECT_EQ(r.code, kExitOk) << r.output;
}

// `tether camera`: the console's view of a camera from the command line, over mutual TLS and
// the datagram plane: every frame that arrives decodes and says where the camera was, and
// the IVF file holds them all.
TEST_F(ConsoleEndToEnd, ACameraIsWatchedDecodedAndWrittenToAnIvfFile) {
  RemoteSiteProcess site("door");
  const std::string address = site.wait_for_address();
  ASSERT_FALSE(address.empty()) << "tether-remote did not report its port:\n" << site.log();
  Result r = tether("--remote " + address + " status");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "stereo_left (640x480, 15 Hz)")) << r.output;
  const std::string ivf = temp_dir() + "/overview.ivf";
  r = tether("--remote " + address + " camera overview --duration 2s --ivf " + ivf);
  ASSERT_EQ(r.code, kExitOk) << r.output;
  const auto value = [&](const std::string& key) {
    const auto at = r.output.find("\n" + key + " ");
    return at == std::string::npos ? -1.0 : std::stod(r.output.substr(at + key.size() + 2));
  };
  EXPECT_TRUE(contains(r.output, "codec vp09.00.10.08")) << r.output;
  EXPECT_GE(value("decoded"), 10.0) << r.output;  // 15 Hz when the machine keeps up
  EXPECT_EQ(value("undecodable"), 0.0) << r.output;
  EXPECT_EQ(value("with_pose"), value("frames")) << r.output;
  EXPECT_GT(value("kbit_per_s"), 0.0) << r.output;
  EXPECT_LE(value("kbit_per_s"), 1500.0) << r.output;
  // IVF: "DKIF", the codec, the size, and the frame count the header ends with.
  std::ifstream in(ivf, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GE(bytes.size(), 32u);
  EXPECT_EQ(bytes.substr(0, 4), "DKIF");
  EXPECT_EQ(bytes.substr(8, 4), "VP90");
  EXPECT_EQ(static_cast<unsigned char>(bytes[12]) | (static_cast<unsigned char>(bytes[13]) << 8),
            640);
  EXPECT_EQ(static_cast<double>(static_cast<unsigned char>(bytes[24])), value("frames"));
  // The stereo pair's head aims; a fixed camera is refused naming its mount.
  r = tether("--remote " + address + " aim stereo_left --pan 20 --tilt -10");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "aimed the head of stereo_left: pan 20°, tilt -10°")) << r.output;
  r = tether("--remote " + address + " aim overview --pan 20");
  EXPECT_NE(r.code, kExitOk);
  EXPECT_TRUE(contains(r.output, "is not on the pan-tilt head (its mount: fixed in the cell)"))
      << r.output;
  // An unknown camera is refused naming the cameras there are.
  r = tether("--remote " + address + " camera nowhere --duration 1s");
  EXPECT_NE(r.code, kExitOk);
  EXPECT_TRUE(contains(r.output,
                       "camera = 'nowhere': no such camera (there are: wrist, "
                       "overview, stereo_left, stereo_right)"))
      << r.output;
}

// The arm and its cameras in another process, as a site with real hardware has them:
// tether-simarm serves the door scene's arm over the UDP arm link and its rendered cameras
// on the TCP camera link beside it; the site reports that scene and its cameras, and an
// operator watches and aims them as with the embedded simulation.
TEST_F(ConsoleEndToEnd, TetherSimarmsCamerasAreWatchedAndAimedThroughTheSite) {
  const std::string key = temp_dir() + "/arm-link.key";
  std::ofstream(key) << "a camera link test secret of 32B";
  const std::string port = std::to_string(free_tcp_port());
  const std::string simarm_log = temp_dir() + "/tether-simarm.log";
  // The camera port defaults to the arm link's port number.
  ::tether::testing::ChildProcess simarm(
      TETHER_SIMARM_BIN,
      {"--scene", "door", "--port", port, "--command-timeout", "200ms", "--key", key}, simarm_log);
  RemoteSiteProcess site(
      "door", {"--arm-link", "udp:127.0.0.1:" + port, "--arm-link-key", key, "--link-timeout",
               "200ms", "--arm-cameras", "tcp:127.0.0.1:" + port});
  const std::string address = site.wait_for_address();
  const auto simarm_output = [&] {
    std::ifstream in(simarm_log);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  ASSERT_FALSE(address.empty()) << "tether-remote did not report its port:\n"
                                << site.log() << "\ntether-simarm:\n"
                                << simarm_output();
  Result r = tether("--remote " + address + " status");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "UDP joint-servo link 127.0.0.1:" + port)) << r.output;
  EXPECT_TRUE(contains(r.output, "stereo_left (640x480, 15 Hz)")) << r.output;
  r = tether("--remote " + address + " camera overview --duration 2s");
  ASSERT_EQ(r.code, kExitOk) << r.output << "\ntether-simarm:\n" << simarm_output();
  const auto value = [&](const std::string& name) {
    const auto at = r.output.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(r.output.substr(at + name.size() + 2));
  };
  EXPECT_GE(value("decoded"), 8.0) << r.output;  // 15 Hz when the machine keeps up
  EXPECT_EQ(value("undecodable"), 0.0) << r.output;
  EXPECT_EQ(value("with_pose"), value("frames")) << r.output;
  r = tether("--remote " + address + " aim stereo_left --pan 15");
  EXPECT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "aimed the head of stereo_left: pan 15°")) << r.output;
  // The simulated arm process stops with its statistics, the camera link's among them.
  simarm.signal(SIGTERM);
  simarm.wait_for(std::chrono::seconds(5));
  const std::string out = simarm_output();
  EXPECT_TRUE(contains(out, "camera link")) << out;
  EXPECT_FALSE(contains(out, "camera link       0 connections")) << out;
}

}  // namespace
}  // namespace tether::local::console
