#pragma once

// A tether program run as a child process by an integration test: spawned with its
// arguments, signalled, waited for with or without a limit, and killed (SIGKILL) and reaped
// if the test leaves it running. Output goes to the test's own, or to a log file (a pipe
// nobody drains could block the child).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tether::testing {

class ChildProcess {
 public:
  // `log` empty: the child shares the test's stdout and stderr. pid() <= 0 if it could not
  // be started.
  ChildProcess(const std::string& binary, const std::vector<std::string>& args,
               const std::string& log = {}) {
    std::vector<std::string> all = {binary};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    argv.reserve(all.size() + 1);
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!log.empty()) {
      posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
      posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    }
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~ChildProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    wait();
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  void signal(int number) const {
    if (pid_ > 0) ::kill(pid_, number);
  }
  // Waits for the child to end; returns its wait status.
  int wait() {
    int status = 0;
    if (pid_ > 0) ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  // Waits up to `limit`; returns the wait status, or -1 if the child is still running.
  int wait_for(std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      if (std::chrono::steady_clock::now() >= end) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

// The port a server child wrote to its --port-file; 0 if the child ended first or `limit`
// passed.
inline int wait_for_port(ChildProcess& child, const std::string& port_file,
                         std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end && child.running()) {
    std::ifstream in(port_file);
    int port = 0;
    if (in >> port && port > 0) return port;
    if (child.wait_for(std::chrono::milliseconds(0)) != -1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

}  // namespace tether::testing
