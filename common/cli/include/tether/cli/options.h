#pragma once

// The command line of every tether program (tether, tether-ground, tether-remote,
// tether-simarm, tether-compare-resolvers, tether-arm), on CLI11: the one copy of the value
// parsers they share, CLI11 validators built on them, the arm options, and the common set-up
// of a CLI::App — -h/--help, --version ("PROGRAM VERSION"), the exit-status footer of --help
// and the way usage errors are reported.
//
// Units: times in seconds [s]; the parsers take s (the default), ms or us.
//
// Every parser throws std::invalid_argument whose message quotes the text and names what is
// allowed, e.g. "'0s': expected a time in (0, 1000000] s, e.g. 2.5, 10s, 500ms or 250us".
// The option is not named there: CLI11 puts it in front ("--duration: '0s': expected ..."),
// other callers add their own.
//
// Depends on CLI11, tether::common and the standard library only.

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tether/common/arm_model.h"
#include "tether/common/urdf_loader.h"

namespace tether::cli {

// Exit statuses every program shares; each program's --help footer lists its own table,
// which may add more (the console's 3-6, tether-remote's 3, tether-ground's 3 and 6).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // runtime failure
inline constexpr int kExitUsage = 2;    // bad command line

// The project's version, "MAJOR.MINOR.PATCH" (CMake's project version).
const char* version();

// ---- values ----

// Longest time a command line may ask for [s] (11.6 days): more is a typo, and it keeps
// every conversion to std::chrono durations far from overflow.
inline constexpr double kMaxSeconds = 1e6;

// A time: a finite number with an optional unit s (the default), ms or us, e.g. "2.5",
// "10s", "500ms", "250us". Returns seconds in (0, max_seconds] when min_seconds is 0, else
// in [min_seconds, max_seconds].
double parse_seconds(std::string_view text, double min_seconds = 0.0,
                     double max_seconds = kMaxSeconds);

// A whole decimal number in [min, max] (no sign for non-negative ranges, no base prefix).
std::int64_t parse_count(std::string_view text, std::int64_t min, std::int64_t max);

// A finite decimal number in [min, max] (infinite bounds: any finite number).
double parse_number(std::string_view text, double min = -std::numeric_limits<double>::infinity(),
                    double max = std::numeric_limits<double>::infinity());

// Exactly `count` comma-separated finite numbers, e.g. "0,90,0,-45,0,30,0".
std::vector<double> parse_number_list(std::string_view text, std::size_t count);

// A network address HOST:PORT, e.g. "127.0.0.1:50051", "simarm.local:50600", "[::1]:50051".
struct Address {
  std::string host;        // without the brackets of an IPv6 literal
  std::uint16_t port = 0;  // in [min_port, 65535]
  std::string text;        // as given, brackets kept: what gRPC takes as a target
};
// HOST:PORT or [IPv6]:PORT with PORT in [min_port, 65535] (min_port 0 admits "any free
// port"); an IPv6 host must be in brackets.
Address parse_address(std::string_view text, std::uint16_t min_port = 1);

// ---- validators ----
// CLI11 validators on the parsers above. Seconds, Count and Number rewrite the value to its
// canonical decimal form (seconds for Seconds, "500ms" -> "0.5") when added with
// ->transform(), so CLI11 stores it in a double or integer; with ->check() the text stays as
// given. Each failure names the option (CLI11), the value and what is allowed.

class Seconds : public CLI::Validator {
 public:
  explicit Seconds(double min_seconds = 0.0, double max_seconds = kMaxSeconds);
};

// A time in [0, max_seconds]: a delay or a jitter, where none is a meaningful setting.
class SecondsOrZero : public CLI::Validator {
 public:
  explicit SecondsOrZero(double max_seconds = kMaxSeconds);
};

class Count : public CLI::Validator {
 public:
  Count(std::int64_t min, std::int64_t max);
};

class Number : public CLI::Validator {
 public:
  Number(double min, double max);
};

class NumberList : public CLI::Validator {
 public:
  explicit NumberList(std::size_t count);
};

class HostPort : public CLI::Validator {
 public:
  explicit HostPort(std::uint16_t min_port = 1);
};

// A name `known` accepts; the message lists `names` ("free, door, wall, obstacles or
// proximity"), so the owner of the names also owns the list.
class OneOf : public CLI::Validator {
 public:
  OneOf(std::function<bool(std::string_view)> known, std::string names);
};

class NonEmpty : public CLI::Validator {
 public:
  NonEmpty();
};

// Whatever `parse` accepts: it throws std::invalid_argument (or tether::ArmModelError)
// whose message names the value and what is allowed. For values a library parses itself.
class ParsedBy : public CLI::Validator {
 public:
  explicit ParsedBy(std::function<void(const std::string&)> parse);
};

// ---- arms ----

// --arm NAME|FILE.urdf, --base LINK, --tool LINK, --joint-limits FILE, --arm-profile FILE
// and --package-path DIR (repeatable), as every tool that loads an arm spells them. The
// names belong to tether::load_arm_by_name: "iiwa7", "panda", "gen3", or a URDF file; the
// files complete a URDF as its maker publishes it (formats in tether/common/arm_yaml.h).
struct ArmOptions {
  std::string name = "iiwa7";
  UrdfLoadOptions urdf;  // links, limits file, profile and package path

  // Throws tether::ArmModelError (a runtime failure, not a usage error: a file may be
  // missing or describe no usable chain).
  ArmModel load() const;
  // The same, with where each limit and arm-angle point came from (tether::ArmLoadReport).
  LoadedArm load_with_report() const;
};
void add_arm_options(CLI::App& app, ArmOptions& arm);

// ---- credentials ----

// Mutual TLS as every networked tether program spells it. Paths to PEM files; with
// --insecure none are needed (plaintext, loopback only, self-declared names).
struct TlsFiles {
  bool insecure = false;
  std::string ca;           // the CA that issued the peer's certificate
  std::string cert;         // this program's certificate
  std::string key;          // its private key
  std::string crl;          // server only: revoked client certificates
  std::string server_name;  // client only: the name the site's certificate must carry when
                            // it differs from the address's host (a proxy, a tunnel)
};
enum class TlsRole { kClient, kServer };
// $XDG_CONFIG_HOME/tether/tether.conf, else ~/.config/tether/tether.conf: where the
// console and tether-ground look for their --config by default.
std::string default_client_config();
// Adds --ca, --cert, --key, --insecure (and --server-name for a client, --crl for a
// server) in `group`, each also from the environment (TETHER_CA, TETHER_CERT, TETHER_KEY,
// TETHER_INSECURE, TETHER_SERVER_NAME, TETHER_CRL), and --config FILE (TETHER_CONFIG,
// default `default_config` when it exists): the same options as TOML lines
// (ca = "/etc/tether/ca.pem"), below the command line and the environment.
void add_tls_options(CLI::App& app, TlsFiles& files, TlsRole role, const std::string& group,
                     const std::string& default_config);

// ---- programs ----

struct ExitStatus {
  int code = 0;
  std::string meaning;
};

struct Program {
  std::string name;                       // "tether-remote"
  std::vector<std::string> usage;         // full synopsis lines, "tether-remote --task FILE ..."
  std::vector<ExitStatus> exit_statuses;  // the --help footer, in this order
  std::string options_group = "options";  // where -h/--help and --version are listed
};

// Sets up `app` (constructed with the program's description) as a tether program:
//   -h,--help            the help: usage, description, commands, arguments, options, the
//                        parent's options (for a command) and the exit statuses; exit 0;
//   --version            prints "NAME VERSION", exit 0;
//   usage errors         "NAME: MESSAGE", the usage line and a pointer to --help on the error
//                        stream, exit kExitUsage (see parse());
//   repeated options     the last one counts, as the hand-written parsers did.
// Call before adding options and commands; options added later are listed under
// program.options_group unless given another ->group().
void configure(CLI::App& app, const Program& program);

// A command of a configured program (`tether upload ...`): `synopsis` follows the program's
// name in the command's usage line ("PROGRAM [global options] SYNOPSIS") and in the
// program's list of commands. Options the command does not know fall through to the program
// (global options go before or after the command name); at most one command per call.
CLI::App* add_command(CLI::App& program, const std::string& name, const std::string& synopsis,
                      const std::string& description);

// Parses `args` (without the program name). Returns the exit status when the program should
// end here — kExitOk after printing --help or --version to `out`, kExitUsage after reporting
// a usage error to `err` — and nothing when it should run.
std::optional<int> parse(CLI::App& app, std::vector<std::string> args, std::ostream& out,
                         std::ostream& err);
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

// The full help of `app` ("tether help upload" prints a command's help without running it).
std::string help_text(const CLI::App& app);

}  // namespace tether::cli
