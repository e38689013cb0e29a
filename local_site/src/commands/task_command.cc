#include "tether/local/commands/task_command.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "command_file.h"
#include "tether/common/kinematics.h"
#include "tether/common/urdf_loader.h"
#include "tether/proto/convert.h"
#include "tether/remote/task/validation.h"

namespace tether::local {
namespace {

std::string join(const std::vector<std::string>& items, const char* last_separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? last_separator : ", ";
    out += items[i];
  }
  return out;
}

// A finite decimal number, as an operator types it ("35", "-0.5", "1e-3", "+2").
std::optional<double> parse_number(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0.0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// A value in a message: numbers as typed, anything else quoted.
std::string shown(const std::string& value) {
  return parse_number(value) ? value : "'" + value + "'";
}

std::string exact(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// Whether a setting at `setting` writes the field `field` or something inside or around it
// (a setting of a whole section or list covers the fields in it).
bool overlaps(const FieldPath& setting, const FieldPath& field) {
  const auto& a = setting.segments();
  const auto& b = field.segments();
  const std::size_t n = std::min(a.size(), b.size());
  if (n == 0) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].name != b[i].name) return false;
    if (a[i].index >= 0 && b[i].index >= 0 && a[i].index != b[i].index) return false;
  }
  return true;
}

// The choice typed: by its name, or a number equal to a number-named choice ("0.020" is the
// choice "0.02").
const ArgumentChoice* find_choice(const CommandArgument& a, const std::string& text) {
  if (const ArgumentChoice* exact_match = a.choice(text)) return exact_match;
  const std::optional<double> typed = parse_number(text);
  if (!typed) return nullptr;
  for (const ArgumentChoice& c : a.choices) {
    if (parse_number(c.name) == typed) return &c;
  }
  return nullptr;
}

// The arguments resolved: every one that takes part, its value, and the settings they make,
// in the order of expansion (choices' settings, then numbers' bindings).
struct Plan {
  struct Value {
    const CommandArgument* argument;
    std::string text;  // canonical: the choice's name, or the number as format_number prints it
    bool given;
  };
  std::vector<Value> values;  // in the command's order
  std::vector<commands::Setting> settings;
  std::vector<std::size_t> owner;  // per setting: its index in `values`
};

CommandArgumentError not_applicable(const CommandArgument& argument, const std::string& value,
                                    const CommandArgument& controller, const std::string& chosen) {
  std::vector<std::string> choices;
  for (const std::string& c : argument.only_with->choices) choices.push_back(c);
  return CommandArgumentError(
      argument.name, value,
      "--" + argument.name + " = " + shown(value) + ": applies only with --" + controller.name +
          " " + join(choices, " or ") + ", not --" + controller.name + " " + chosen);
}

// Resolves `given` against `command`: unknown names first, then choices not among the
// allowed, then each argument in the command's order; the first bad argument throws.
Plan plan(const TaskCommand& command, const ArgumentValues& given) {
  for (const auto& [name, value] : given) {
    if (command.argument(name) == nullptr) {
      std::vector<std::string> names;
      for (const CommandArgument& a : command.arguments) names.push_back("--" + a.name);
      throw CommandArgumentError(name, value,
                                 "--" + name + " = " + shown(value) + ": '" + command.name +
                                     "' has no such argument; " +
                                     (names.empty() ? std::string("it takes none")
                                                    : "its arguments: " + join(names, ", ")));
    }
  }
  // Choices first: conditions depend on them. A required choice left out is reported below,
  // and only if it takes part.
  std::map<std::string, const ArgumentChoice*> chosen;
  for (const CommandArgument& a : command.arguments) {
    if (a.kind != ArgumentKind::kChoice) continue;
    const auto it = given.find(a.name);
    if (it == given.end() && !a.default_choice) continue;
    const std::string& text = it != given.end() ? it->second : *a.default_choice;
    const ArgumentChoice* choice = find_choice(a, text);
    if (choice == nullptr) {
      throw CommandArgumentError(
          a.name, text,
          "--" + a.name + " = " + shown(text) + ": not a choice; allowed: " + a.allowed());
    }
    chosen[a.name] = choice;
  }
  // Whether an argument takes part: its condition holds (conditions name choice arguments,
  // checked when the command was read; one left out holds none).
  const auto active = [&](const CommandArgument& a) {
    if (!a.only_with) return true;
    const auto it = chosen.find(a.only_with->argument);
    if (it == chosen.end()) return false;
    const auto& choices = a.only_with->choices;
    return std::find(choices.begin(), choices.end(), it->second->name) != choices.end();
  };

  Plan p;
  std::vector<std::pair<std::size_t, double>> numbers;  // index in p.values, value
  for (const CommandArgument& a : command.arguments) {
    const auto it = given.find(a.name);
    if (!active(a)) {
      if (it != given.end()) {
        const auto controller = chosen.find(a.only_with->argument);
        throw not_applicable(a, it->second, *command.argument(a.only_with->argument),
                             controller == chosen.end() ? "(none)" : controller->second->name);
      }
      continue;
    }
    if (a.kind == ArgumentKind::kChoice) {
      const auto choice = chosen.find(a.name);
      if (choice == chosen.end()) {
        throw CommandArgumentError(a.name, "", "--" + a.name + " is required: " + a.allowed());
      }
      p.values.push_back({&a, choice->second->name, it != given.end()});
      continue;
    }
    if (it == given.end() && !a.default_number) {
      throw CommandArgumentError(a.name, "", "--" + a.name + " is required: " + a.allowed());
    }
    double value = 0.0;
    if (it != given.end()) {
      const std::optional<double> parsed = parse_number(it->second);
      if (!parsed) {
        throw CommandArgumentError(
            a.name, it->second,
            "--" + a.name + " = " + shown(it->second) + ": not a number; allowed: " + a.allowed());
      }
      if (!(*parsed >= a.min && *parsed <= a.max)) {
        throw CommandArgumentError(
            a.name, it->second,
            "--" + a.name + " = " + it->second + ": outside the allowed range " + a.allowed());
      }
      value = *parsed;
    } else {
      value = *a.default_number;
    }
    numbers.emplace_back(p.values.size(), value);
    p.values.push_back({&a, format_number(value), it != given.end()});
  }
  // Choices first, so a choice may set a whole section and a number still land inside it.
  for (std::size_t v = 0; v < p.values.size(); ++v) {
    const CommandArgument& a = *p.values[v].argument;
    if (a.kind != ArgumentKind::kChoice) continue;
    for (const FieldSetting& s : a.choice(p.values[v].text)->settings) {
      p.settings.push_back({s.path, s.value});
      p.owner.push_back(v);
    }
  }
  for (const auto& [v, value] : numbers) {
    for (const NumberBinding& b : p.values[v].argument->bindings) {
      p.settings.push_back({b.path, exact(b.scale * value + b.offset)});
      p.owner.push_back(v);
    }
  }
  return p;
}

std::string argument_text(const Plan::Value& value) {
  return "--" + value.argument->name + " " + value.text;
}

// Applies the plan; a setting that does not apply becomes the error of its argument.
TaskParameters apply(const TaskCommand& command, const Plan& p, const std::string& name) {
  std::size_t failed = 0;
  try {
    return commands::apply_to_template(command.template_text, p.settings, name, failed);
  } catch (const proto::ConversionError& e) {
    std::vector<std::size_t> owners;
    if (failed < p.settings.size()) {
      owners.push_back(p.owner[failed]);
    } else {
      for (std::size_t s = 0; s < p.settings.size(); ++s) {
        if (overlaps(p.settings[s].path, e.path()) &&
            std::find(owners.begin(), owners.end(), p.owner[s]) == owners.end()) {
          owners.push_back(p.owner[s]);
        }
      }
    }
    if (owners.empty()) throw;
    const Plan::Value& value = p.values[owners.front()];
    throw CommandArgumentError(value.argument->name, value.text,
                               "--" + value.argument->name + " = " + shown(value.text) +
                                   ": cannot be applied to the template: " + e.what());
  }
}

// A name the task-name rules accept (validation.h): other characters become '_', and a name
// too long keeps its start and a hash of the whole, so that different arguments still give
// different names.
std::string safe_task_name(std::string name) {
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  if (name.size() <= kMaxTaskNameLength) return name;
  std::uint32_t hash = 2166136261u;  // FNV-1a
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "-%08x", static_cast<unsigned>(hash));
  return name.substr(0, kMaxTaskNameLength - 9) + suffix;
}

// The command's name and every argument given: a choice by its name when that is a word
// ("spring"), else and for numbers with the argument's name ("period0.02", "angle40").
std::string derived_name(const TaskCommand& command, const Plan& p) {
  std::string name = command.name;
  for (const Plan::Value& v : p.values) {
    if (!v.given) continue;
    const bool word = v.argument->kind == ArgumentKind::kChoice && !v.text.empty() &&
                      std::isalpha(static_cast<unsigned char>(v.text.front()));
    name += "_" + (word ? v.text : v.argument->name + v.text);
  }
  return safe_task_name(name);
}

}  // namespace

// ---- the domain types ----

const ArgumentChoice* CommandArgument::choice(std::string_view name) const {
  for (const ArgumentChoice& c : choices) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string CommandArgument::allowed() const {
  if (kind == ArgumentKind::kChoice) {
    std::vector<std::string> names;
    for (const ArgumentChoice& c : choices) names.push_back(c.name);
    return join(names, " or ");
  }
  // Appended piecewise: GCC 12's -Wrestrict misfires on `"literal" + std::string` chains.
  std::string text = "[";
  text += format_number(min);
  text += ", ";
  text += format_number(max);
  text += "]";
  if (!unit.empty()) text += " " + unit;
  return text;
}

std::string CommandArgument::default_text() const {
  if (default_choice) return *default_choice;
  if (default_number) return format_number(*default_number);
  return "";
}

const CommandArgument* TaskCommand::argument(std::string_view name) const {
  for (const CommandArgument& a : arguments) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

namespace {
std::string joined_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += (out.empty() ? "" : "\n") + line;
  return out;
}
}  // namespace

CommandFileError::CommandFileError(std::vector<std::string> problems)
    : std::runtime_error(joined_lines(problems)), problems_(std::move(problems)) {}

CommandArgumentError::CommandArgumentError(std::string argument, std::string value,
                                           const std::string& message)
    : std::invalid_argument(message), argument_(std::move(argument)), value_(std::move(value)) {}

std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.12g", value);
  return text;
}

// ---- files and folders ----

TaskCommand load_task_command(const std::string& path) {
  std::vector<std::string> problems;
  TaskCommand command = commands::read_command_file(path, problems);
  if (problems.empty()) {
    // Every choice of every choice argument, the others at their defaults (required ones at
    // their first choice or the lower end of their range), must expand into a set that
    // converts: what no operator has tried yet is tried here.
    ArgumentValues base;
    for (const CommandArgument& a : command.arguments) {
      if (!a.required() || a.only_with) continue;
      base[a.name] =
          a.kind == ArgumentKind::kChoice ? a.choices.front().name : format_number(a.min);
    }
    std::vector<ArgumentValues> trials{base};
    for (const CommandArgument& a : command.arguments) {
      if (a.kind != ArgumentKind::kChoice || a.only_with) continue;
      for (const ArgumentChoice& c : a.choices) {
        ArgumentValues trial = base;
        trial[a.name] = c.name;
        trials.push_back(std::move(trial));
      }
    }
    for (const ArgumentValues& trial : trials) {
      std::string with;
      for (const auto& [name, value] : trial) with += " --" + name + " " + value;
      try {
        const Plan p = plan(command, trial);
        (void)apply(command, p, command.name);
      } catch (const std::invalid_argument& e) {
        problems.push_back(
            command.source + ": '" + command.name + with +
            "' (the other arguments at their defaults) does not expand: " + e.what());
      }
    }
  }
  if (!problems.empty()) throw CommandFileError(std::move(problems));
  return command;
}

CommandLibrary CommandLibrary::load(const std::string& directory) {
  CommandLibrary library;
  library.directory_ = directory;
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw CommandFileError({directory +
                            ": not a folder of task commands (give --commands DIR or set "
                            "TETHER_COMMANDS_DIR)"});
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (entry.path().extension() == ".textproto" && !entry.is_directory()) {
      files.push_back(entry.path().string());
    }
  }
  if (error) {
    throw CommandFileError({directory + ": cannot list the folder (" + error.message() + ")"});
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> problems;
  for (const std::string& file : files) {
    try {
      library.commands_.push_back(load_task_command(file));
    } catch (const CommandFileError& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
    }
  }
  if (!problems.empty()) throw CommandFileError(std::move(problems));
  std::sort(library.commands_.begin(), library.commands_.end(),
            [](const TaskCommand& a, const TaskCommand& b) { return a.name < b.name; });
  return library;
}

const TaskCommand* CommandLibrary::find(std::string_view name) const {
  for (const TaskCommand& command : commands_) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::string CommandLibrary::names() const {
  std::vector<std::string> names;
  for (const TaskCommand& command : commands_) names.push_back(command.name);
  return join(names, ", ");
}

std::string default_commands_directory() {
  return shipped_directory("TETHER_COMMANDS_DIR", TETHER_SOURCE_COMMANDS_DIR,
                           TETHER_INSTALL_COMMANDS_DIR, "commands");
}

// ---- expansion ----

Expansion expand(const TaskCommand& command, const ArgumentValues& given,
                 const KinematicModel& model, const std::string& name) {
  const Plan p = plan(command, given);
  const std::string task_name = name.empty() ? derived_name(command, p) : name;
  if (!valid_task_name(task_name)) {
    throw std::invalid_argument("--name = '" + task_name + "': a task name is 1 to " +
                                std::to_string(kMaxTaskNameLength) +
                                " of A-Z a-z 0-9 _ - . (not . or ..)");
  }
  Expansion expansion;
  expansion.task = apply(command, p, task_name);
  std::vector<ValidationIssue> issues = validate_task(expansion.task, model);
  if (!issues.empty()) {
    // Name the arguments that set each offending field: those are what the operator changes.
    for (ValidationIssue& issue : issues) {
      std::vector<std::string> by;
      for (std::size_t s = 0; s < p.settings.size(); ++s) {
        const std::string text = argument_text(p.values[p.owner[s]]);
        if (overlaps(p.settings[s].path, issue.path) &&
            std::find(by.begin(), by.end(), text) == by.end()) {
          by.push_back(text);
        }
      }
      if (!by.empty()) issue.message += " (set by " + join(by, ", ") + ")";
    }
    throw TaskValidationError(expansion.task.name, std::move(issues));
  }
  expansion.command_line = command.name;
  for (const Plan::Value& v : p.values) {
    expansion.values.emplace_back(v.argument->name, v.text);
    if (v.given) expansion.command_line += " " + argument_text(v);
  }
  return expansion;
}

std::string task_name(const TaskCommand& command, const ArgumentValues& given) {
  return derived_name(command, plan(command, given));
}

// ---- help ----

std::string describe_argument(const CommandArgument& a) {
  std::string text;
  if (a.kind == ArgumentKind::kNumber) {
    text = (a.unit.empty() ? "" : "[" + a.unit + "] ") + a.help + "; " +
           (a.default_number ? "default " + format_number(*a.default_number) : "required") +
           ", in [" + format_number(a.min) + ", " + format_number(a.max) + "]";
  } else {
    text = (a.unit.empty() ? "" : "[" + a.unit + "] ") + a.help + "; " +
           (a.default_choice ? "default " + *a.default_choice : "required");
  }
  if (a.only_with) {
    text += "; only with --" + a.only_with->argument + " " + join(a.only_with->choices, " or ");
  }
  if (a.kind == ArgumentKind::kChoice) {
    for (const ArgumentChoice& c : a.choices) {
      text += "\n  " + c.name + (c.help.empty() ? "" : ": " + c.help);
    }
  }
  return text;
}

std::string format_command_list(const CommandLibrary& library) {
  if (library.commands().empty()) return "no task commands in " + library.directory() + "\n";
  std::string out;
  for (const TaskCommand& command : library.commands()) {
    out += command.name + ": " + command.summary + " (scene " + command.scene + ")\n";
    for (const CommandArgument& a : command.arguments) {
      out += "    --" + a.name + " " + a.value_name + "  ";
      const std::string description = describe_argument(a);
      for (const char c : description)
        out += c == '\n' ? std::string("\n        ") : std::string(1, c);
      out += '\n';
    }
  }
  return out;
}

}  // namespace tether::local
