#include "command_file.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "tether/local/console/preview.h"
#include "tether/proto/convert.h"
#include "tether/proto/set_field.h"
#include "tether/proto/task_io.h"
#include "tether/v1/task.pb.h"
#include "tether/v1/task_command.pb.h"

namespace tether::local::commands {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::TextFormat;

// Protobuf's text parser stops at the first error; this keeps it with its place.
class ParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (text.empty()) {
      this->line = line;
      this->column = column;
      text = message;
    }
  }
  int line = -1;
  int column = -1;
  std::string text;
};

// `path` (a FieldPath in tether.v1.TaskParameters) inside `base`.
FieldPath under(FieldPath base, const FieldPath& path) {
  for (const FieldPath::Segment& segment : path.segments()) {
    base = base.field(segment.name);
    if (segment.index >= 0) base = base.element(segment.index);
  }
  return base;
}

// Full precision: the value written is the value computed.
std::string exact(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

bool kebab_case(const std::string& name) {
  if (name.empty() || name.size() > 32 || name.front() < 'a' || name.front() > 'z') return false;
  char previous = 0;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok || (c == '-' && previous == '-')) return false;
    previous = c;
  }
  return name.back() != '-';
}

// A choice is typed on the command line and becomes part of a task name.
bool choice_name(const std::string& name) {
  if (name.empty() || name.size() > 32 || name.front() == '-') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == std::string::npos;
}

// The file being read: where each field of the TaskCommand sits (the parser's record of
// where every field it read starts), and the problems found, each placed there.
class Reader {
 public:
  Reader(std::string path, const TextFormat::ParseInfoTree& tree, std::vector<std::string>& out)
      : path_(std::move(path)), tree_(tree), problems_(out) {}

  // The field itself, or the innermost message the file gives around it, or the file.
  SourcePosition at(const FieldPath& path) const {
    const Descriptor* descriptor = v1::TaskCommand::descriptor();
    const TextFormat::ParseInfoTree* tree = &tree_;
    SourcePosition best{path_};
    for (const FieldPath::Segment& segment : path.segments()) {
      const FieldDescriptor* field =
          descriptor == nullptr ? nullptr : descriptor->FindFieldByName(segment.name);
      if (field == nullptr) break;
      const int index = field->is_repeated() ? std::max(segment.index, 0) : -1;
      const TextFormat::ParseLocation location = tree->GetLocation(field, index);
      if (location.line < 0) break;
      best = SourcePosition{path_, location.line + 1, location.column + 1};
      if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
      tree = tree->GetTreeForNested(field, index);
      if (tree == nullptr) break;
      descriptor = field->message_type();
    }
    return best;
  }

  FieldPath placed(const FieldPath& path) const { return path.at(at(path)); }

  // `detail` follows the placed path directly, as in every message about a field.
  void problem(const FieldPath& path, const std::string& detail) {
    problems_.push_back(placed(path).to_string() + detail);
  }

 private:
  std::string path_;
  const TextFormat::ParseInfoTree& tree_;
  std::vector<std::string>& problems_;
};

// Applies (path, value) to a copy of the template; the problem, if any, as set_field words it.
std::optional<std::string> try_setting(const v1::TaskParameters& task, const std::string& path,
                                       const std::string& value) {
  v1::TaskParameters copy = task;
  try {
    proto::set_field(copy, path, value);
  } catch (const proto::ConversionError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

void read_number(const v1::NumberArgument& m, const FieldPath& at, const v1::TaskParameters& task,
                 Reader& reader, CommandArgument& argument) {
  argument.kind = ArgumentKind::kNumber;
  argument.min = m.min();
  argument.max = m.max();
  const bool range_ok = std::isfinite(m.min()) && std::isfinite(m.max()) && m.min() <= m.max();
  if (!range_ok) {
    reader.problem(at.field("max"), " = " + format_number(m.max()) +
                                        " with min = " + format_number(m.min()) +
                                        ": the range must be finite with min ≤ max");
  }
  if (m.has_default_value()) {
    argument.default_number = m.default_value();
    if (range_ok && !(m.default_value() >= m.min() && m.default_value() <= m.max())) {
      reader.problem(at.field("default_value"),
                     " = " + format_number(m.default_value()) + ": outside the allowed range [" +
                         format_number(m.min()) + ", " + format_number(m.max()) + "]");
    }
  }
  if (m.bindings().empty()) {
    reader.problem(at,
                   ": no bindings: give at least one field the value is written to, "
                   "bindings { path: \"...\" }");
  }
  // Every binding is tried on the template with the value it would write by default (the
  // lower end of the range for a required argument), so a wrong path or a field of the
  // wrong type is found now, not when an operator first uses the command.
  const double probe = argument.default_number.value_or(m.min());
  for (int j = 0; j < m.bindings_size(); ++j) {
    const v1::NumberBinding& b = m.bindings(j);
    const FieldPath here = at.field("bindings").element(j);
    NumberBinding binding;
    binding.scale = b.has_scale() ? b.scale() : 1.0;
    binding.offset = b.offset();
    if (!std::isfinite(binding.scale) || binding.scale == 0.0) {
      reader.problem(here.field("scale"), " = " + format_number(binding.scale) +
                                              ": must be finite and not 0 (absent: 1)");
    }
    if (!std::isfinite(binding.offset)) {
      reader.problem(here.field("offset"),
                     " = " + format_number(binding.offset) + ": must be finite");
    }
    const std::optional<FieldPath> path = FieldPath::parse(b.path());
    if (!path) {
      reader.problem(here.field("path"), " = '" + b.path() +
                                             "': not a field path of tether.v1.TaskParameters, "
                                             "e.g. force_control.reference_wrench.torque.x");
      continue;
    }
    if (range_ok && std::isfinite(binding.scale) && std::isfinite(binding.offset)) {
      if (auto error = try_setting(task, b.path(), exact(binding.scale * probe + binding.offset))) {
        reader.problem(here.field("path"), ": " + *error);
      }
    }
    binding.path = path->at(reader.at(here.field("path")));
    argument.bindings.push_back(std::move(binding));
  }
}

void read_choice(const v1::ChoiceArgument& m, const FieldPath& at, const v1::TaskParameters& task,
                 Reader& reader, CommandArgument& argument) {
  argument.kind = ArgumentKind::kChoice;
  if (m.choices().empty()) {
    reader.problem(at, ": no choices: give at least one, choices { name: \"...\" }");
  }
  std::set<std::string> names;
  for (int k = 0; k < m.choices_size(); ++k) {
    const v1::Choice& c = m.choices(k);
    const FieldPath here = at.field("choices").element(k);
    if (!choice_name(c.name())) {
      reader.problem(here.field("name"), " = '" + c.name() +
                                             "': a choice is 1 to 32 of A-Z a-z 0-9 _ - . "
                                             "(not starting with -)");
    } else if (!names.insert(c.name()).second) {
      reader.problem(here.field("name"), " = '" + c.name() + "': given twice");
    }
    ArgumentChoice choice{c.name(), c.help(), {}};
    for (int s = 0; s < c.settings_size(); ++s) {
      const v1::FieldSetting& setting = c.settings(s);
      const FieldPath where = here.field("settings").element(s).field("path");
      const std::optional<FieldPath> path = FieldPath::parse(setting.path());
      if (!path) {
        reader.problem(where, " = '" + setting.path() +
                                  "': not a field path of tether.v1.TaskParameters, e.g. "
                                  "teleoperation or bounds.max_force_n");
        continue;
      }
      if (auto error = try_setting(task, setting.path(), setting.value())) {
        reader.problem(where, ": " + *error);
      }
      choice.settings.push_back(FieldSetting{path->at(reader.at(where)), setting.value()});
    }
    argument.choices.push_back(std::move(choice));
  }
  if (!m.default_choice().empty()) {
    argument.default_choice = m.default_choice();
    if (names.count(m.default_choice()) == 0) {
      std::string known;
      for (const auto& c : argument.choices) known += (known.empty() ? "" : ", ") + c.name;
      reader.problem(at.field("default_choice"),
                     " = '" + m.default_choice() + "': not one of its choices (" + known + ")");
    }
  }
}

}  // namespace

TaskCommand read_command_file(const std::string& path, std::vector<std::string>& problems) {
  TaskCommand command;
  command.source = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problems.push_back(path + ": cannot read the command file (" + std::strerror(errno) + ")");
    return command;
  }
  std::ostringstream content;
  content << in.rdbuf();

  v1::TaskCommand message;
  TextFormat::ParseInfoTree tree;
  ParseErrors errors;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(content.str(), &message)) {
    problems.push_back(path + ":" + std::to_string(errors.line + 1) + ":" +
                       std::to_string(errors.column + 1) + ": " + errors.text);
    return command;
  }
  Reader reader(path, tree, problems);

  command.name = message.name();
  command.summary = message.summary();
  command.scene = message.scene();
  if (!kebab_case(message.name())) {
    reader.problem("name", " = '" + message.name() +
                               "': a command's name is kebab-case (a-z, 0-9 and single "
                               "dashes, starting with a letter, at most 32)");
  } else if (std::filesystem::path(path).stem().string() != message.name()) {
    reader.problem("name", " = '" + message.name() + "': the file must be named " + message.name() +
                               ".textproto");
  }
  if (!one_line(message.summary())) {
    reader.problem("summary", " = '" + message.summary() + "': give one line for the list");
  }
  try {
    check_preview_scene(message.scene());
  } catch (const std::invalid_argument& e) {
    reader.problem("scene", " = '" + message.scene() + "': " + e.what());
  }
  if (message.has_preview_duration_s()) {
    const double d = message.preview_duration_s();
    if (!(d > 0.0 && d <= 3600.0)) {
      reader.problem("preview_duration_s",
                     " = " + format_number(d) + ": must be in (0, 3600] s (absent: the preview's)");
    } else {
      command.preview_duration = d;
    }
  }

  // The template: it must convert on its own (each number and rotation checked as in a task
  // file); its name is the expansion's to give.
  if (!message.has_task()) {
    reader.problem("task", ": missing: give the template, a tether.v1.TaskParameters");
  } else {
    if (!message.task().name().empty()) {
      reader.problem("task.name", " = '" + message.task().name() +
                                      "': leave it out; the expansion names the task (--name, "
                                      "else the command and its arguments)");
    }
    try {
      (void)proto::to_task(message.task());
    } catch (const proto::ConversionError& e) {
      reader.problem(under("task", e.path()), e.detail());
    }
    TextFormat::Printer printer;
    printer.SetUseShortRepeatedPrimitives(true);
    printer.PrintToString(message.task(), &command.template_text);
  }

  std::set<std::string> names;
  for (int k = 0; k < message.arguments_size(); ++k) {
    const v1::CommandArgument& a = message.arguments(k);
    const FieldPath at = FieldPath("arguments").element(k);
    CommandArgument argument;
    argument.name = a.name();
    argument.help = a.help();
    argument.unit = a.unit();
    argument.value_name = a.value_name();
    argument.position = reader.at(at);
    bool reserved = false;
    for (const char* name : kReservedArgumentNames) reserved = reserved || a.name() == name;
    if (!kebab_case(a.name())) {
      reader.problem(at.field("name"), " = '" + a.name() +
                                           "': an argument's name is kebab-case (a-z, 0-9 and "
                                           "single dashes, starting with a letter, at most 32)");
    } else if (reserved) {
      reader.problem(at.field("name"), " = '" + a.name() +
                                           "': reserved for an option of `tether do` or of "
                                           "every tether program");
    } else if (!names.insert(a.name()).second) {
      reader.problem(at.field("name"), " = '" + a.name() + "': given twice");
    }
    if (!one_line(a.help())) {
      reader.problem(at.field("help"), " = '" + a.help() + "': give one line for the help");
    }
    switch (a.kind_case()) {
      case v1::CommandArgument::kNumber:
        read_number(a.number(), at.field("number"), message.task(), reader, argument);
        if (argument.value_name.empty()) argument.value_name = "VALUE";
        break;
      case v1::CommandArgument::kChoice:
        read_choice(a.choice(), at.field("choice"), message.task(), reader, argument);
        if (argument.value_name.empty()) {
          for (const ArgumentChoice& c : argument.choices) {
            argument.value_name += (argument.value_name.empty() ? "" : "|") + c.name;
          }
        }
        break;
      default:
        reader.problem(at, ": give its kind, number { ... } or choice { ... }");
        break;
    }
    if (a.has_only_with()) {
      argument.only_with =
          ArgumentCondition{a.only_with().argument(),
                            {a.only_with().choices().begin(), a.only_with().choices().end()}};
    }
    command.arguments.push_back(std::move(argument));
  }

  // Conditions name a choice argument of this command and some of its choices.
  for (std::size_t k = 0; k < command.arguments.size(); ++k) {
    const CommandArgument& argument = command.arguments[k];
    if (!argument.only_with) continue;
    const FieldPath at = FieldPath("arguments").element(static_cast<int>(k)).field("only_with");
    const CommandArgument* other = command.argument(argument.only_with->argument);
    if (other == nullptr || other == &argument || other->kind != ArgumentKind::kChoice) {
      reader.problem(at.field("argument"), " = '" + argument.only_with->argument +
                                               "': must name another choice argument of '" +
                                               command.name + "'");
      continue;
    }
    if (argument.only_with->choices.empty()) {
      reader.problem(at.field("choices"), ": none: give the choices of --" + other->name +
                                              " this argument applies with");
    }
    for (std::size_t c = 0; c < argument.only_with->choices.size(); ++c) {
      const std::string& name = argument.only_with->choices[c];
      if (other->choice(name) == nullptr) {
        reader.problem(
            at.field("choices").element(static_cast<int>(c)),
            " = '" + name + "': not a choice of --" + other->name + " (" + other->allowed() + ")");
      }
    }
  }
  return command;
}

TaskParameters apply_to_template(const std::string& template_text,
                                 const std::vector<Setting>& settings, const std::string& name,
                                 std::size_t& failed) {
  v1::TaskParameters message;
  if (!TextFormat::ParseFromString(template_text, &message)) {
    failed = settings.size();
    throw proto::ConversionError("the command's template no longer parses");
  }
  for (std::size_t i = 0; i < settings.size(); ++i) {
    failed = i;
    proto::set_field(message, settings[i].path.unplaced().to_string(), settings[i].value);
  }
  failed = settings.size();
  message.set_name(name);
  return proto::to_task(message);
}

}  // namespace tether::local::commands
