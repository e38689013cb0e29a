#pragma once

// Runs the `tether` binary for the console tests: a private scratch folder per test
// process (also the config home, so `tether connect` never touches the user's) and the
// command's exit status and combined output.

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace tether::local::console::testing {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Created on first use and removed when the test process exits.
inline std::string scratch_dir() {
  struct Scratch {
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("tether_console_test_" + std::to_string(::getpid()));
    Scratch() { std::filesystem::create_directories(dir); }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
  };
  static const Scratch scratch;
  return scratch.dir.string();
}

// `tether ARGS` without TETHER_REMOTE, `environment` ("NAME=value ...") added.
inline Result run_tether(const std::string& args, const std::string& environment = "") {
  const std::string command = "env -u TETHER_REMOTE XDG_CONFIG_HOME='" + scratch_dir() +
                              "/config' " + environment + " '" TETHER_CONSOLE "' " + args + " 2>&1";
  Result result;
  FILE* pipe = ::popen(command.c_str(), "r");
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

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tether::local::console::testing
