#pragma once

// The real pair for the console's end-to-end tests: `tether-remote --serve` (door scene,
// real-time loop, mutual TLS with the test PKI) and `tether-ground --web 127.0.0.1:0` as
// child processes, the ground's console address read from its log.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"

namespace tether::local::web::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A child whose log is polled for a line matching `pattern`; its first group, or empty
// after `limit` or once the child ended.
inline std::string wait_for_line(::tether::testing::ChildProcess& child, const std::string& log,
                                 const std::regex& pattern, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    std::smatch match;
    const std::string text = read_text(log);
    if (std::regex_search(text, match, pattern)) return match[1];
    if (child.wait_for(std::chrono::milliseconds(0)) != -1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

class WebPair {
 public:
  // Starts both; `ground_args` are added to the ground's --site, --config (the operator's),
  // --web and --web-root (this pair's scratch directory: the tests do not need the built
  // front end). Returns an empty string on success, else what went wrong with the logs.
  std::string start(const std::string& name, const std::vector<std::string>& ground_args) {
    dir_ = (std::filesystem::temp_directory_path() /
            ("tether_" + name + "_" + std::to_string(::getpid())))
               .string();
    std::filesystem::create_directories(dir_);
    std::filesystem::remove(dir_ + "/port");
    remote_ = std::make_unique<::tether::testing::ChildProcess>(
        TETHER_REMOTE_BIN,
        std::vector<std::string>{"--serve", "127.0.0.1:0", "--scene", "door", "--site", "door",
                                 "--port-file", dir_ + "/port", "--config",
                                 TETHER_TEST_PKI "/sites/remote.conf"},
        dir_ + "/remote.log");
    const int port =
        ::tether::testing::wait_for_port(*remote_, dir_ + "/port", std::chrono::seconds(30));
    if (port <= 0) return "remote did not start: " + read_text(dir_ + "/remote.log");
    std::vector<std::string> args{"--site",     "door=127.0.0.1:" + std::to_string(port),
                                  "--config",   TETHER_TEST_PKI "/people/operator.conf",
                                  "--web",      "127.0.0.1:0",
                                  "--web-root", dir_};
    args.insert(args.end(), ground_args.begin(), ground_args.end());
    ground_ =
        std::make_unique<::tether::testing::ChildProcess>(TETHER_GROUND_BIN, args, ground_log());
    url_ = wait_for_line(*ground_, ground_log(),
                         std::regex("console: (https?://127\\.0\\.0\\.1:[0-9]+/)"),
                         std::chrono::seconds(30));
    if (url_.empty()) return "ground did not start: " + read_text(ground_log());
    return {};
  }
  ~WebPair() {
    if (ground_) {
      ground_->signal(SIGTERM);
      ground_->wait_for(std::chrono::seconds(10));
    }
    if (remote_) {
      remote_->signal(SIGTERM);
      remote_->wait_for(std::chrono::seconds(5));
    }
    ground_.reset();
    remote_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  const std::string& dir() const { return dir_; }
  const std::string& url() const { return url_; }
  int web_port() const { return std::stoi(url_.substr(url_.rfind(':') + 1)); }
  std::string ground_log() const { return dir_ + "/ground.log"; }
  ::tether::testing::ChildProcess& ground() { return *ground_; }

 private:
  std::string dir_, url_;
  std::unique_ptr<::tether::testing::ChildProcess> remote_, ground_;
};

}  // namespace tether::local::web::testing
