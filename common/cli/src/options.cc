#include "tether/cli/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#ifndef TETHER_VERSION
#error "TETHER_VERSION (the CMake project version) must come from the build: tether_target_defaults"
#endif

namespace tether::cli {
namespace {

// Integral values exactly ("1000000", "-3"), others with the shortest text that reads back
// to the same double ("0.5", "1e-07").
std::string format_number(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// The whole of `text` as a double (no leading '+', spaces or hex); nothing otherwise.
std::optional<double> read_double(std::string_view text, std::size_t& used) {
  double value = 0.0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  used = static_cast<std::size_t>(end - text.data());
  return value;
}

std::string seconds_range(double min_seconds, double max_seconds) {
  return (min_seconds > 0.0 ? "[" + format_number(min_seconds) : std::string("(0")) + ", " +
         format_number(max_seconds) + "] s";
}

std::string number_range(double min, double max) {
  if (std::isinf(min) && std::isinf(max)) return "a finite number";
  if (std::isinf(max)) return "a finite number >= " + format_number(min);
  if (std::isinf(min)) return "a finite number <= " + format_number(max);
  return "a number in [" + format_number(min) + ", " + format_number(max) + "]";
}

// A CLI11 validator function from a parser that throws; a modifying validator writes the
// canonical text back.
using Canonical = std::function<std::string(const std::string&)>;
std::function<std::string(std::string&)> validate_with(Canonical canonical) {
  return [canonical = std::move(canonical)](std::string& value) -> std::string {
    try {
      value = canonical(value);
      return {};
    } catch (const std::exception& e) {
      return e.what();
    }
  };
}

// The help layout of every program: usage first, then what it does, its commands, arguments
// and options, the options of the program a command belongs to, and the exit statuses.
class HelpFormatter final : public CLI::Formatter {
 public:
  HelpFormatter(std::vector<std::string> usage, std::string summary)
      : usage_(std::move(usage)), summary_(std::move(summary)) {
    label("Positionals", "arguments");
    column_width(28);
  }

  const std::vector<std::string>& usage() const { return usage_; }

  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (usage_.empty()) return CLI::Formatter::make_usage(app, std::move(name));
    std::string out;
    for (std::size_t i = 0; i < usage_.size(); ++i) {
      out += (i == 0 ? "usage: " : "       ") + usage_[i] + '\n';
    }
    return out;
  }

  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::string out = make_usage(app, name);
    if (!app->get_description().empty()) {
      out += '\n' + app->get_description();
      if (out.back() != '\n') out += '\n';
    }
    out += make_subcommands(app, mode);
    out += make_positionals(app);
    out += make_groups(app, mode);
    // A command takes its program's options too (they fall through); Sub mode leaves out
    // the program's --help, which the command has itself.
    if (const CLI::App* parent = app->get_parent()) {
      out += make_groups(parent, CLI::AppFormatMode::Sub);
    }
    out += '\n' + make_footer(app);
    return out;
  }

  // A program lists its commands by their synopsis ("tether upload FILE [--name N]").
  std::string make_subcommand(const CLI::App* sub) const override {
    const auto formatter = std::dynamic_pointer_cast<const HelpFormatter>(sub->get_formatter());
    if (formatter == nullptr || formatter->summary_.empty()) {
      return CLI::Formatter::make_subcommand(sub);
    }
    return "  " + formatter->summary_ + '\n';
  }

  // The value's name only ("--duration T"): ranges and defaults are in the description and
  // in the error messages.
  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_positional() || option->get_option_text().empty()) return {};
    return " " + option->get_option_text();
  }

 private:
  std::vector<std::string> usage_;
  std::string summary_;  // this command's line in its program's command list
};

// The innermost command given on the command line, or the program itself.
const CLI::App* innermost(const CLI::App* app) {
  for (;;) {
    const std::vector<CLI::App*> selected = app->get_subcommands();
    if (selected.empty()) return app;
    app = selected.front();
  }
}

bool has_commands(const CLI::App* app) {
  return !app->get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); })
              .empty();
}

std::string failure_message(const CLI::App* app, const CLI::Error& error) {
  const CLI::App* scope = innermost(app);
  std::string message = error.what();
  // CLI11 reports an unknown command as an unexpected argument.
  if (scope == app && has_commands(app) && dynamic_cast<const CLI::ExtrasError*>(&error)) {
    const std::vector<std::string> rest = app->remaining();
    if (!rest.empty() && !rest.front().empty() && rest.front().front() != '-') {
      message = "unknown command " + in_quotes(rest.front());
    }
  }
  std::string out = app->get_name() + ": " + message + '\n';
  if (const auto formatter = std::dynamic_pointer_cast<const HelpFormatter>(scope->get_formatter());
      formatter != nullptr && !formatter->usage().empty()) {
    out += formatter->make_usage(scope, "");
  }
  const bool overview = scope == app && has_commands(app);
  out += "(`" + (scope == app ? app->get_name() : app->get_name() + " " + scope->get_name()) +
         " --help` lists " + (overview ? "the commands and options" : "the options") + ")\n";
  return out;
}

}  // namespace

const char* version() { return TETHER_VERSION; }

// ---- values ----

double parse_seconds(std::string_view text, double min_seconds, double max_seconds) {
  const auto fail = [&]() -> double {
    throw std::invalid_argument(in_quotes(text) + ": expected a time in " +
                                seconds_range(min_seconds, max_seconds) +
                                ", e.g. 2.5, 10s, 500ms or 250us");
  };
  std::size_t used = 0;
  const std::optional<double> number = read_double(text, used);
  if (!number) return fail();
  const std::string_view unit = text.substr(used);
  double seconds = *number;
  if (unit == "ms") {
    seconds *= 1e-3;
  } else if (unit == "us") {
    seconds *= 1e-6;
  } else if (!unit.empty() && unit != "s") {
    return fail();
  }
  const bool above_min = min_seconds > 0.0 ? seconds >= min_seconds : seconds > 0.0;
  if (!std::isfinite(seconds) || !above_min || seconds > max_seconds) return fail();
  return seconds;
}

std::int64_t parse_count(std::string_view text, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    throw std::invalid_argument(in_quotes(text) + ": expected a whole number in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return value;
}

double parse_number(std::string_view text, double min, double max) {
  std::size_t used = 0;
  const std::optional<double> value = read_double(text, used);
  if (!value || used != text.size() || !std::isfinite(*value) || *value < min || *value > max) {
    throw std::invalid_argument(in_quotes(text) + ": expected " + number_range(min, max));
  }
  return *value;
}

std::vector<double> parse_number_list(std::string_view text, std::size_t count) {
  std::vector<double> values;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma - start);
    std::size_t used = 0;
    const std::optional<double> value = read_double(item, used);
    if (!value || used != item.size() || !std::isfinite(*value)) break;
    values.push_back(*value);
    if (comma == std::string_view::npos) {
      if (values.size() == count) return values;
      break;
    }
    start = comma + 1;
  }
  throw std::invalid_argument(in_quotes(text) + ": expected " + std::to_string(count) +
                              " comma-separated finite numbers");
}

Address parse_address(std::string_view text, std::uint16_t min_port) {
  const auto fail = [&](const std::string& problem) -> Address {
    throw std::invalid_argument(in_quotes(text) + ": " + problem +
                                " (expected HOST:PORT with PORT in [" + std::to_string(min_port) +
                                ", 65535], e.g. 127.0.0.1:50051)");
  };
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return fail("no ':' before the port");
  Address address;
  address.text = std::string(text);
  address.host = std::string(text.substr(0, colon));
  if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  } else if (address.host.find(':') != std::string::npos) {
    return fail("an IPv6 host goes in brackets, [::1]:50051");
  }
  if (address.host.empty()) return fail("no host");
  try {
    address.port = static_cast<std::uint16_t>(parse_count(text.substr(colon + 1), min_port, 65535));
  } catch (const std::invalid_argument&) {
    return fail("bad port " + in_quotes(text.substr(colon + 1)));
  }
  return address;
}

// ---- validators ----

Seconds::Seconds(double min_seconds, double max_seconds)
    : CLI::Validator("TIME in " + seconds_range(min_seconds, max_seconds)) {
  func_ = validate_with([=](const std::string& text) {
    return format_number(parse_seconds(text, min_seconds, max_seconds));
  });
}

SecondsOrZero::SecondsOrZero(double max_seconds)
    : CLI::Validator("TIME in [0, " + format_number(max_seconds) + "] s") {
  func_ = validate_with([=](const std::string& text) {
    std::size_t used = 0;
    const std::optional<double> number = read_double(text, used);
    if (number && *number == 0.0) {
      const std::string_view unit = std::string_view(text).substr(used);
      if (unit.empty() || unit == "s" || unit == "ms" || unit == "us") return std::string("0");
    }
    try {
      return format_number(parse_seconds(text, 0.0, max_seconds));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(in_quotes(text) + ": expected a time in [0, " +
                                  format_number(max_seconds) + "] s, e.g. 0, 10s, 500ms");
    }
  });
}

Count::Count(std::int64_t min, std::int64_t max)
    : CLI::Validator("INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]") {
  func_ = validate_with(
      [=](const std::string& text) { return std::to_string(parse_count(text, min, max)); });
}

Number::Number(double min, double max) : CLI::Validator(number_range(min, max)) {
  func_ = validate_with(
      [=](const std::string& text) { return format_number(parse_number(text, min, max)); });
}

NumberList::NumberList(std::size_t count)
    : CLI::Validator(std::to_string(count) + " comma-separated numbers") {
  func_ = validate_with([=](const std::string& text) {
    parse_number_list(text, count);
    return text;
  });
}

HostPort::HostPort(std::uint16_t min_port) : CLI::Validator("HOST:PORT") {
  func_ = validate_with([=](const std::string& text) {
    parse_address(text, min_port);
    return text;
  });
}

OneOf::OneOf(std::function<bool(std::string_view)> known, std::string names)
    : CLI::Validator(names) {
  func_ = [known = std::move(known), names = std::move(names)](std::string& value) {
    return known(value) ? std::string() : in_quotes(value) + ": expected " + names;
  };
}

NonEmpty::NonEmpty() : CLI::Validator("NOT EMPTY") {
  func_ = [](std::string& value) { return value.empty() ? std::string("must not be empty") : ""; };
}

ParsedBy::ParsedBy(std::function<void(const std::string&)> parse) : CLI::Validator("") {
  func_ = validate_with([parse = std::move(parse)](const std::string& text) {
    parse(text);
    return text;
  });
}

// ---- arms ----

ArmModel ArmOptions::load() const { return load_arm_by_name(name, urdf); }

LoadedArm ArmOptions::load_with_report() const { return load_arm_by_name_with_report(name, urdf); }

void add_arm_options(CLI::App& app, ArmOptions& arm) {
  app.add_option("--arm", arm.name,
                 "iiwa7 (default), panda, gen3, or a URDF file (with --tool, and --base if\n"
                 "its root is not the base)")
      ->option_text("NAME|URDF")
      ->check(NonEmpty());
  app.add_option("--base", arm.urdf.base_link, "base link of a URDF file (default: its root link)")
      ->option_text("LINK");
  app.add_option("--tool", arm.urdf.tool_link, "tool link of a URDF file (required with a file)")
      ->option_text("LINK");
  app.add_option("--joint-limits", arm.urdf.joint_limits_file,
                 "MoveIt joint_limits.yaml: velocity, acceleration and position limits that\n"
                 "complete or narrow the URDF's")
      ->option_text("FILE")
      ->check(NonEmpty());
  app.add_option("--arm-profile", arm.urdf.arm_profile_file,
                 "tether arm profile (YAML): accelerations, ranges of continuous joints,\n"
                 "shoulder/elbow/wrist points, point tolerance")
      ->option_text("FILE")
      ->check(NonEmpty());
  app.add_option("--package-path", arm.urdf.package_paths,
                 "directory holding ROS packages, for package:// meshes (repeatable; meshes\n"
                 "are reported, never needed)")
      ->option_text("DIR")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// ---- credentials ----

std::string default_client_config() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/tether/tether.conf";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.config/tether/tether.conf";
}

void add_tls_options(CLI::App& app, TlsFiles& files, TlsRole role, const std::string& group,
                     const std::string& default_config) {
  const bool client = role == TlsRole::kClient;
  app.add_option("--ca", files.ca,
                 client ? "CA certificate the site's certificate must chain to (PEM)"
                        : "CA certificate callers' certificates must chain to (PEM)")
      ->option_text("FILE")
      ->envname("TETHER_CA")
      ->group(group);
  app.add_option("--cert", files.cert,
                 client ? "this operator's certificate (PEM); its CN is the identity"
                        : "this site's certificate (PEM)")
      ->option_text("FILE")
      ->envname("TETHER_CERT")
      ->group(group);
  app.add_option("--key", files.key, "the certificate's private key (PEM)")
      ->option_text("FILE")
      ->envname("TETHER_KEY")
      ->group(group);
  if (client) {
    app.add_option("--server-name", files.server_name,
                   "name the site's certificate must carry (default: the address's host)")
        ->option_text("NAME")
        ->envname("TETHER_SERVER_NAME")
        ->group(group);
  } else {
    app.add_option("--crl", files.crl, "revoked client certificates (PEM CRL), reread on SIGHUP")
        ->option_text("FILE")
        ->envname("TETHER_CRL")
        ->group(group);
  }
  app.add_flag("--insecure", files.insecure,
               client ? "plaintext without certificates (loopback sites started --insecure)"
                      : "plaintext, unauthenticated, callers name themselves; loopback only")
      ->envname("TETHER_INSECURE")
      ->group(group);
  app.set_config("--config", default_config,
                 "read options from FILE, TOML lines such as ca = \"/etc/tether/ca.pem\"" +
                     (default_config.empty() ? std::string()
                                             : "\n(default " + default_config + " if present)"))
      ->option_text("FILE")
      ->envname("TETHER_CONFIG")
      ->group(group);
}

// ---- programs ----

void configure(CLI::App& app, const Program& program) {
  app.name(program.name);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->group(program.options_group);
  app.set_help_flag("-h,--help", "print this help and exit")->group(program.options_group);
  app.set_version_flag("--version", program.name + " " + version(),
                       "print \"" + program.name + " VERSION\" and exit")
      ->group(program.options_group);
  std::string footer = "exit status:";
  for (const ExitStatus& status : program.exit_statuses) {
    footer += "\n  " + std::to_string(status.code) + "  " + status.meaning;
  }
  app.footer(footer);
  app.formatter(std::make_shared<HelpFormatter>(program.usage, ""));
  app.failure_message(failure_message);
}

CLI::App* add_command(CLI::App& program, const std::string& name, const std::string& synopsis,
                      const std::string& description) {
  program.require_subcommand(0, 1);
  CLI::App* command = program.add_subcommand(name, description);
  command->group("commands");
  command->fallthrough();
  command->option_defaults()->group("options");
  // Again, now in the command's group (the inherited flag predates the command's defaults).
  command->set_help_flag("-h,--help", "print this help and exit");
  command->formatter(std::make_shared<HelpFormatter>(
      std::vector<std::string>{program.get_name() + " [global options] " + synopsis},
      program.get_name() + " " + synopsis));
  return command;
}

std::optional<int> parse(CLI::App& app, std::vector<std::string> args, std::ostream& out,
                         std::ostream& err) {
  // --config from TETHER_CONFIG: CLI11 (2.1) reads its config file before the environment, so
  // the option's envname alone never took effect; given here as if on the command line, ahead
  // of the arguments (an explicit --config still wins: the last one counts).
  const char* config = std::getenv("TETHER_CONFIG");
  if (config != nullptr && *config != '\0' && app.get_config_ptr() != nullptr &&
      std::find(args.begin(), args.end(), "--config") == args.end()) {
    args.insert(args.begin(), {"--config", config});
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    app.parse(args);
    // Documentation checks (tests/docs/check_doc_commands.py) parse each command a page shows
    // against the program's own options without running it: hardware, servers and minutes-long
    // runs included.
    if (const char* check = std::getenv("TETHER_CHECK_COMMAND_LINE"); check != nullptr && *check) {
      out << app.get_name() << ": command line accepted (TETHER_CHECK_COMMAND_LINE)\n";
      return kExitOk;
    }
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105 for a validation error, ...) become the documented one.
    return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;
  }
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  return parse(app, std::vector<std::string>(argv + std::min(argc, 1), argv + argc), std::cout,
               std::cerr);
}

std::string help_text(const CLI::App& app) {
  return app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
}

}  // namespace tether::cli
