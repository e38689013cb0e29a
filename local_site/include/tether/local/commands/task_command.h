#pragma once

// Task commands: the seed's Command To Behavior Map, at the local site. An operator's task
// command with typed arguments (`open-door --mode spring --angle 35`, `polish --force 10`)
// expands into a whole task parameter set (tether::TaskParameters), validated for the arm
// before anything is sent; the remote site stays fixed software and only ever receives the
// expanded set. The console runs them as `tether do COMMAND [--ARG VALUE ...]`.
//
// The commands are data: one file per command, <name>.textproto, a tether.v1.TaskCommand
// (proto/tether/v1/task_command.proto, which also states how a command expands) in a
// commands folder — local_site/commands/ in the source tree, share/tether/commands once
// installed. Adding a command (a new behaviour mix, another scene) is adding a file.
//
// Paths are FieldPaths in tether.v1.TaskParameters (common/task/field_path.h), applied with
// tether::proto::set_field: the spelling and the machinery of task files and `tether set`.
// Units of a number argument are the command file's (`unit`), converted by its bindings
// (value written = scale · argument + offset) into the schema's SI units and frames.
//
// Errors: a command file that cannot be used throws CommandFileError listing every problem
// at its place in the file ("open-door.textproto:88:16: arguments[1].number.bindings[0].path
// = ...: ..."); a bad argument throws CommandArgumentError naming the argument, the value
// and what is allowed ("--angle = 120: outside the allowed range [0, 90] deg"); an expanded
// set the arm cannot run throws TaskValidationError, each issue naming the argument that set
// its field. Nothing partly expanded is ever returned.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tether/common/task/field_path.h"
#include "tether/remote/task/task_parameters.h"

namespace tether {
class KinematicModel;
}  // namespace tether

namespace tether::local {

// value written = scale · argument + offset, into the scalar field at `path`.
struct NumberBinding {
  FieldPath path;  // placed in the command file
  double scale = 1.0;
  double offset = 0.0;
};

// One field of the template set from protobuf text format (a number, an enum name or a
// message's fields), as `tether set PATH VALUE` sets it.
struct FieldSetting {
  FieldPath path;  // placed in the command file
  std::string value;
};

struct ArgumentChoice {
  std::string name;  // what the operator types
  std::string help;
  std::vector<FieldSetting> settings;  // applied in order on top of the template
};

// The argument takes part only when the choice argument `argument` has one of `choices`.
struct ArgumentCondition {
  std::string argument;
  std::vector<std::string> choices;
};

enum class ArgumentKind { kNumber, kChoice };

struct CommandArgument {
  std::string name;        // the option without "--", kebab-case
  std::string help;        // one line
  std::string unit;        // as operators write it ("deg", "N", "s"); may be empty
  std::string value_name;  // in the help: "--angle DEG"
  ArgumentKind kind = ArgumentKind::kNumber;
  // kNumber: the allowed range [min, max] in `unit`, the default (none: required) and where
  // the value goes.
  double min = 0.0;
  double max = 0.0;
  std::optional<double> default_number;
  std::vector<NumberBinding> bindings;
  // kChoice: the choices and the default one (none: required).
  std::vector<ArgumentChoice> choices;
  std::optional<std::string> default_choice;
  std::optional<ArgumentCondition> only_with;
  SourcePosition position;  // of the argument in its command file

  bool required() const { return !default_number && !default_choice; }
  const ArgumentChoice* choice(std::string_view name) const;
  // What is allowed, for messages and help: "[0, 90] deg", "force, spring or shared".
  std::string allowed() const;
  // The default as an operator would type it ("35", "force"); empty when required.
  std::string default_text() const;
};

struct TaskCommand {
  std::string name;     // kebab-case, `tether do NAME`
  std::string summary;  // one line
  std::string scene;    // the preview scene the template is written for (free, door, wall, ...)
  std::optional<double> preview_duration;  // [s] task time a preview simulates by default
  std::vector<CommandArgument> arguments;  // in the order of the file: the order of expansion
  // The template, a tether.v1.TaskParameters in protobuf text format, kept as text so that
  // settings land on it exactly as written (a rotation given as rpy stays rpy).
  std::string template_text;
  std::string source;  // the file it was read from

  const CommandArgument* argument(std::string_view name) const;
};

// A command file, or a commands folder, that cannot be used. what() is every problem, one a
// line; each starts with its place in the file ("file:line:column: ").
class CommandFileError : public std::runtime_error {
 public:
  explicit CommandFileError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// A bad argument: unknown, missing, not a number, out of range, not a choice, or given
// without the choice it needs. what() is "--NAME = VALUE: what is wrong; what is allowed".
class CommandArgumentError : public std::invalid_argument {
 public:
  CommandArgumentError(std::string argument, std::string value, const std::string& message);
  const std::string& argument() const { return argument_; }  // without "--"
  const std::string& value() const { return value_; }        // as given

 private:
  std::string argument_;
  std::string value_;
};

// Option names no command file may give an argument: those of `tether do` itself and every
// tether program's (see local_site/src/console/cli.cc).
inline constexpr const char* kReservedArgumentNames[] = {
    "arm",      "ca",      "cert",     "commands", "config",      "diff",  "duration",
    "h",        "help",    "insecure", "key",      "list",        "name",  "no-preview",
    "operator", "preview", "print",    "remote",   "replace",     "scene", "server-name",
    "start",    "timeout", "upload",   "version",  "wait-seconds"};

// Reads one command file (.textproto) and checks it whole: its name (that of the file),
// summary and scene; every argument's name (kebab-case, unique, not reserved), kind, range
// and default; every binding and choice setting applied to the template (the path must
// exist and take the value); conditions naming a choice argument and its choices; and that
// every choice expands with the defaults into a set that converts. Throws CommandFileError
// listing every problem at its place in the file. Validation for an arm happens at
// expansion (expand()).
TaskCommand load_task_command(const std::string& path);

// Every command of one folder (*.textproto, not recursing), sorted by name.
class CommandLibrary {
 public:
  // Throws CommandFileError listing the problems of every file (the folder is refused
  // whole, so a broken file is noticed rather than missing from the list), or naming a
  // folder that cannot be read.
  static CommandLibrary load(const std::string& directory);

  const std::string& directory() const { return directory_; }
  const std::vector<TaskCommand>& commands() const { return commands_; }
  const TaskCommand* find(std::string_view name) const;
  // Comma-separated names, for messages.
  std::string names() const;

 private:
  std::string directory_;
  std::vector<TaskCommand> commands_;
};

// Where the console finds the commands without --commands: $TETHER_COMMANDS_DIR when set;
// else the first folder of the source tree's local_site/commands (a build tree),
// <install prefix>/share/tether/commands and ../share/tether/commands beside the running
// program (a relocated package, /usr/bin/../share/tether/commands); else the install
// prefix's, for the message that it is missing.
std::string default_commands_directory();

// The operator's arguments: name without "--" -> value as typed.
using ArgumentValues = std::map<std::string, std::string>;

struct Expansion {
  TaskParameters task;  // validated for the arm; named
  // Every argument that took part, given or default, in the command's order, as text.
  std::vector<std::pair<std::string, std::string>> values;
  // The command line that gives this set: the command and the arguments given, e.g.
  // "open-door --mode spring --angle 40".
  std::string command_line;
};

// Expands `command` with `given`: template, then every choice's settings, then every
// number's bindings (task_command.proto), then validate_task for `model`. A choice is typed
// by its name, or for a number-named choice as any equal number ("0.020" for "0.02"). The
// task is named `name`, or task_name() when `name` is empty. Throws CommandArgumentError
// for the first bad argument (unknown names first, then choices not among the allowed, then
// each argument in the command's order), TaskValidationError when the set is invalid for the arm
// (each issue names the arguments that set its field, "(set by --limit -5)"), std::invalid_argument
// for a name that is not a valid task name.
Expansion expand(const TaskCommand& command, const ArgumentValues& given,
                 const KinematicModel& model, const std::string& name = "");

// The task's name from the command and the arguments given, in the command's order: a
// choice by its name when that is a word, else and for a number with the argument's name
// ("open-door_spring_angle40", "open-door_shared_period0.02"; "open-door" with none); kept
// within the task-name rules (validation.h: at most 64 of A-Z a-z 0-9 _ - .), a longer one
// shortened with a hash of the whole so different arguments keep different names.
std::string task_name(const TaskCommand& command, const ArgumentValues& given);

// Help for operators. One argument: "[deg] spring destination: ...; default 35, in
// [0, 90]; only with --mode spring" (choices listed on lines of their own).
std::string describe_argument(const CommandArgument& argument);
// `tether do --list`: each command with its summary, scene and arguments.
std::string format_command_list(const CommandLibrary& library);
// Number as the help and names print it: up to 12 significant digits, no trailing zeros.
std::string format_number(double value);

}  // namespace tether::local
