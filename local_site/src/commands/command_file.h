#pragma once

// tether.v1.TaskCommand files <-> the commands' domain types (task_command.h), and the
// template with settings applied. The only place in local_site/src/commands where generated
// types meet domain types (as local_site/src/link/wire.h is for the link); the rest of the
// commands' code sees text and FieldPaths only.

#include <cstddef>
#include <string>
#include <vector>

#include "tether/common/task/field_path.h"
#include "tether/local/commands/task_command.h"
#include "tether/remote/task/task_parameters.h"

namespace tether::local::commands {

// Reads `path` and converts it; every problem that conversion finds (structure, and paths
// and values that do not apply to the template) is appended to `problems`, placed in the
// file. The returned command is only usable when `problems` stayed empty.
TaskCommand read_command_file(const std::string& path, std::vector<std::string>& problems);

// A text-format value for a path, in the order they are applied.
struct Setting {
  FieldPath path;
  std::string value;
};

// The template parsed, `settings` set on it in order (proto::set_field), converted to the
// domain (proto::to_task), named `name`. On a setting that cannot be applied, throws
// proto::ConversionError and sets `failed` to its index; on a conversion error of the
// whole, `failed` is settings.size(). The template text itself is trusted: it was printed
// by read_command_file.
TaskParameters apply_to_template(const std::string& template_text,
                                 const std::vector<Setting>& settings, const std::string& name,
                                 std::size_t& failed);

}  // namespace tether::local::commands
