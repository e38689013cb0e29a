// The console against a real remote site: starts `tether-remote --serve` on a free port
// (door scene, real-time loop) and drives the `tether` binary through an operator's session.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "tether/local/console/cli.h"
#include "tether/local/console/recording.h"

extern char** environ;

namespace tether::local::console {
namespace {

struct Result {
  int code = -1;
  std::string output;
};

std::string temp_dir() {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tether_e2e_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

Result run_shell(const std::string& command) {
  Result result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// tether-remote --serve as a child process; its address is read from what it prints.
class RemoteSiteProcess {
 public:
  explicit RemoteSiteProcess(const std::vector<std::string>& args) {
    int out[2];
    if (::pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> argv;
    std::vector<std::string> all = {TETHER_REMOTE_BIN};
    all.insert(all.end(), args.begin(), args.end());
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    output_ = ::fdopen(out[0], "r");
  }

  ~RemoteSiteProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      for (int k = 0; k < 50 && ::waitpid(pid_, &status, WNOHANG) == 0; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    if (output_ != nullptr) std::fclose(output_);
  }

  // Reads the process's output until it names the address it listens on.
  std::string wait_for_address(std::string& log) {
    static const std::regex address(R"((127\.0\.0\.1:[1-9][0-9]*))");
    char line[4096];
    while (output_ != nullptr && std::fgets(line, sizeof line, output_) != nullptr) {
      log += line;
      std::smatch match;
      const std::string text = line;
      if (std::regex_search(text, match, address)) return match[1];
    }
    return {};
  }

 private:
  pid_t pid_ = -1;
  FILE* output_ = nullptr;
};

class ConsoleEndToEnd : public ::testing::Test {
 protected:
  Result tether(const std::string& args) {
    return run_shell("env -u TETHER_REMOTE XDG_CONFIG_HOME='" + temp_dir() +
                     "/config' '" TETHER_CONSOLE "' --operator e2e@test " + args);
  }
};

TEST_F(ConsoleEndToEnd, OpensTheDoorFromConnectToReset) {
  RemoteSiteProcess site(TETHER_REMOTE_SERVE_ARGS);
  std::string log;
  const std::string address = site.wait_for_address(log);
  ASSERT_FALSE(address.empty()) << "tether-remote did not report its address:\n" << log;

  Result r = tether("connect " + address);
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "connected to site")) << r.output;
  // From here on the saved address is the default remote.
  r = tether("status");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "state        idle")) << r.output;

  r = tether("upload --scene door " TETHER_SOURCE_DIR "/remote_site/tasks/door_force.textproto");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "no breach predicted")) << r.output;
  EXPECT_TRUE(contains(r.output, "uploaded 'door_force'")) << r.output;

  r = tether("upload " TETHER_SOURCE_DIR "/tests/remote/scenarios/bad_task.textproto");
  EXPECT_EQ(r.code, kExitInvalidTask) << r.output;
  EXPECT_TRUE(contains(r.output, "impedance.mass[3] = -2")) << r.output;

  r = tether("list");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_TRUE(contains(r.output, "door_force")) << r.output;
  EXPECT_TRUE(contains(r.output, "force control")) << r.output;
  EXPECT_FALSE(contains(r.output, "bad")) << r.output;

  r = tether("start nonexistent");
  EXPECT_EQ(r.code, kExitRefused) << r.output;

  r = tether("start door_force");
  ASSERT_EQ(r.code, kExitOk) << r.output;

  const std::string csv = temp_dir() + "/door.csv";
  const std::string png = temp_dir() + "/door.png";
  r = tether("record " + csv + " --duration 3s --decimation 10");
  ASSERT_EQ(r.code, kExitOk) << r.output;
  const Recording recording = read_recording(csv);
  ASSERT_GT(recording.rows, 100u) << r.output;  // ~300 at 1 kHz / 10
  double peak = -1.0;
  for (double a : recording.column("aux0")) peak = std::max(peak, a);
  EXPECT_GT(peak * 180.0 / M_PI, 10.0) << "door angle (aux0) never passed 10 deg";

  r = tether("plot " + csv + " " + png);
  ASSERT_EQ(r.code, kExitOk) << r.output;
  EXPECT_GT(std::filesystem::file_size(png), 1000u);

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

}  // namespace
}  // namespace tether::local::console
