#pragma once

// The operator console `tether` (local_site/apps/tether_console_main.cc) as a library: the
// command-line grammar (CLI11, with the conventions of every tether program: tether::cli),
// the commands and their exit codes. `tether --help`, `tether COMMAND --help` (or
// `tether help COMMAND`) print the synopsis, `tether --version` the version;
// local_site/README.md documents it.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tether::local::console {

// Exit codes of every command (0-2 as every tether program, tether/cli/options.h).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;            // runtime or remote error not listed below
inline constexpr int kExitUsage = 2;            // bad command line
inline constexpr int kExitRefused = 3;          // FAILED_PRECONDITION, NOT_FOUND, ALREADY_EXISTS
inline constexpr int kExitInvalidTask = 4;      // task refused by local or remote validation
inline constexpr int kExitBreachPredicted = 5;  // preview predicts a bound breach
inline constexpr int kExitUnreachable = 6;      // UNAVAILABLE or DEADLINE_EXCEEDED

inline constexpr const char* kDefaultRemote = "127.0.0.1:50051";

// Where `tether connect` saves the address: $XDG_CONFIG_HOME/tether/remote, else
// $HOME/.config/tether/remote.
std::string saved_remote_path();
std::optional<std::string> load_saved_remote();

// Runs one console invocation; `args` excludes the program name. Output for the operator
// goes to `out`, diagnostics to `err`.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tether::local::console
