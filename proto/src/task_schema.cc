#include "tether/proto/task_schema.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "tether/v1/task.pb.h"

namespace tether::proto {
namespace {

namespace pb = google::protobuf;

constexpr std::string_view kGeometryFile = "tether/v1/geometry.proto";

// Messages of geometry.proto are values (a vector, a pose), not sections of a task.
bool is_value_type(const pb::Descriptor* m) { return m->file()->name() == kGeometryFile; }

bool numeric_value_type(const pb::Descriptor* m) {
  const std::string& n = m->name();
  return is_value_type(m) && (n == "Vector3" || n == "Twist" || n == "Wrench" ||
                              n == "JointVector" || n == "MotionVector");
}

bool numeric_scalar(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

std::string type_name(const pb::FieldDescriptor* f) {
  std::string t;
  switch (f->type()) {
    case pb::FieldDescriptor::TYPE_MESSAGE:
      t = f->message_type()->name();
      break;
    case pb::FieldDescriptor::TYPE_ENUM:
      t = "enum " + f->enum_type()->name();
      break;
    default:
      t = f->type_name();
  }
  return f->is_repeated() ? "repeated " + t : t;
}

void walk(const pb::Descriptor* message, const std::string& prefix, int depth,
          std::vector<SchemaField>& out) {
  for (int i = 0; i < message->field_count(); ++i) {
    const pb::FieldDescriptor* f = message->field(i);
    SchemaField s;
    s.path = prefix + f->name();
    s.depth = depth;
    s.descriptor = f;
    s.type = type_name(f);
    const pb::Descriptor* sub = f->message_type();
    s.numeric = sub != nullptr ? numeric_value_type(sub) : numeric_scalar(f);
    s.section = sub != nullptr && !is_value_type(sub);
    if (f->options().HasExtension(v1::spec)) {
      s.has_spec = true;
      s.spec = f->options().GetExtension(v1::spec);
    }
    out.push_back(s);
    if (s.section) walk(sub, s.path + (f->is_repeated() ? "[]." : "."), depth + 1, out);
  }
}

// Numbers as validation's messages print them (TaskChecker::number): 10 significant digits.
std::string number(double v) {
  std::ostringstream out;
  out.precision(10);
  out << v;
  return out.str();
}

std::string cxx_number(double v) {
  if (std::isinf(v)) return v > 0 ? "kInf" : "-kInf";
  std::ostringstream out;
  out.precision(17);
  out << v;
  std::string s = out.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// Comments by element: "tether.v1.Message" and "tether.v1.Message.field".
using Comments = std::map<std::string, std::string>;

std::string clean(const std::string& text) {
  // One line: comment lines joined, surrounding space dropped, table pipes escaped.
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void collect(const pb::FileDescriptorProto& file, Comments& comments) {
  std::map<std::vector<int>, std::string> by_path;
  for (const pb::SourceCodeInfo::Location& l : file.source_code_info().location()) {
    std::string text = l.leading_comments();
    if (!l.trailing_comments().empty()) {
      text += (text.empty() ? "" : " ") + l.trailing_comments();
    }
    if (!text.empty()) by_path[{l.path().begin(), l.path().end()}] = clean(text);
  }
  // DescriptorProto paths: message_type = 4, nested_type = 3, field = 2.
  const auto message = [&](const auto& self, const pb::DescriptorProto& m, const std::string& name,
                           const std::vector<int>& path) -> void {
    if (auto it = by_path.find(path); it != by_path.end()) comments[name] = it->second;
    for (int i = 0; i < m.field_size(); ++i) {
      std::vector<int> p = path;
      p.insert(p.end(), {2, i});
      if (auto it = by_path.find(p); it != by_path.end()) {
        comments[name + "." + m.field(i).name()] = it->second;
      }
    }
    for (int i = 0; i < m.nested_type_size(); ++i) {
      std::vector<int> p = path;
      p.insert(p.end(), {3, i});
      self(self, m.nested_type(i), name + "." + m.nested_type(i).name(), p);
    }
  };
  // Top-level enums (enum_type = 5, value = 2): "tether.v1.Enum" and "tether.v1.Enum.VALUE".
  for (int i = 0; i < file.enum_type_size(); ++i) {
    const pb::EnumDescriptorProto& e = file.enum_type(i);
    const std::string name = file.package() + "." + e.name();
    if (auto it = by_path.find({5, i}); it != by_path.end()) comments[name] = it->second;
    for (int k = 0; k < e.value_size(); ++k) {
      if (auto it = by_path.find({5, i, 2, k}); it != by_path.end()) {
        comments[name + "." + e.value(k).name()] = it->second;
      }
    }
  }
  for (int i = 0; i < file.message_type_size(); ++i) {
    message(message, file.message_type(i), file.package() + "." + file.message_type(i).name(),
            {4, i});
  }
}

std::string comment_of(const Comments& comments, const std::string& key) {
  const auto it = comments.find(key);
  return it == comments.end() ? "" : it->second;
}

}  // namespace

std::vector<SchemaField> task_schema() {
  std::vector<SchemaField> out;
  walk(v1::TaskParameters::descriptor(), "", 0, out);
  return out;
}

std::string allowed_text(const SchemaField& field) {
  const v1::FieldSpec& s = field.spec;
  std::string range;
  if (s.has_min() && s.has_max()) {
    range = std::string(s.min_exclusive() ? "(" : "[") + number(s.min()) + ", " + number(s.max()) +
            (s.max_exclusive() ? ")" : "]");
  } else if (s.has_min()) {
    range = std::string(s.min_exclusive() ? "> " : "≥ ") + number(s.min());
  } else if (s.has_max()) {
    range = std::string(s.max_exclusive() ? "< " : "≤ ") + number(s.max());
  } else if (field.numeric) {
    range = "finite";
  }
  if (field.numeric && s.infinite_allowed()) range += ", or left out (none)";
  return range;
}

std::string rules_table(const std::vector<SchemaField>& schema) {
  std::ostringstream out;
  out << "// Generated by tether-task-schema from the (tether.v1.spec) options of\n"
         "// proto/tether/v1/task.proto and behaviours/*.proto. Do not edit: change the .proto.\n"
         "// {path, min, min_exclusive, max, max_exclusive, infinite_allowed, unit}\n";
  std::string missing;
  for (const SchemaField& f : schema) {
    if (!f.numeric) continue;
    if (!f.has_spec) {
      missing += "\n  " + f.path + " (" + f.type + ")";
      continue;
    }
    const v1::FieldSpec& s = f.spec;
    out << "{\"" << f.path << "\", " << cxx_number(s.has_min() ? s.min() : -INFINITY) << ", "
        << (s.min_exclusive() ? "true" : "false") << ", "
        << cxx_number(s.has_max() ? s.max() : INFINITY) << ", "
        << (s.max_exclusive() ? "true" : "false") << ", "
        << (s.infinite_allowed() ? "true" : "false") << ", \"" << s.unit() << "\"},\n";
  }
  if (!missing.empty()) {
    throw std::runtime_error(
        "these numeric task fields have no (tether.v1.spec) option, so validation would not "
        "know their range:" +
        missing);
  }
  return out.str();
}

std::string reference(const std::vector<SchemaField>& schema,
                      const pb::FileDescriptorSet& descriptors) {
  Comments comments;
  for (const pb::FileDescriptorProto& file : descriptors.file()) collect(file, comments);
  std::ostringstream out;
  out << "<!-- Generated by `tether-task-schema --reference docs/task-reference.md` from the\n"
         "     (tether.v1.spec) options and comments of proto/tether/v1/. Do not edit by hand. "
         "-->\n";
  const auto row = [&](const SchemaField& f, const std::string& shown) {
    const std::string key =
        f.descriptor->containing_type()->full_name() + "." + f.descriptor->name();
    std::string rule = f.spec.rule();
    std::string allowed = allowed_text(f);
    if (!rule.empty()) allowed += (allowed.empty() ? "" : "; ") + rule;
    out << "| `" << shown << "` | " << f.type << " | " << clean(f.spec.unit()) << " | "
        << clean(f.spec.frame()) << " | " << clean(f.spec.default_value()) << " | "
        << clean(allowed) << " | " << comment_of(comments, key) << " |\n";
  };
  const auto header = [&] {
    out << "\n| field | type | unit | frame | default | allowed | meaning |\n"
           "|---|---|---|---|---|---|---|\n";
  };
  // The task's own fields first, then a section per message-valued field of TaskParameters.
  out << "\n## The task's own fields\n";
  header();
  for (const SchemaField& f : schema) {
    if (f.depth == 0) row(f, f.path);
  }
  for (std::size_t i = 0; i < schema.size(); ++i) {
    const SchemaField& top = schema[i];
    if (top.depth != 0 || !top.section) continue;
    out << "\n## `" << top.path << "`\n";
    const std::string about = comment_of(comments, top.descriptor->message_type()->full_name());
    if (!about.empty()) out << "\n" << about << "\n";
    header();
    for (std::size_t j = i + 1; j < schema.size() && schema[j].depth > 0; ++j) {
      row(schema[j], schema[j].path);
    }
  }
  // The enumerations the task uses, once each, in the order they first appear.
  out << "\n## Enumerations\n";
  std::vector<const pb::EnumDescriptor*> enums;
  for (const SchemaField& f : schema) {
    const pb::EnumDescriptor* e = f.descriptor->enum_type();
    if (e != nullptr && std::find(enums.begin(), enums.end(), e) == enums.end()) {
      enums.push_back(e);
    }
  }
  for (const pb::EnumDescriptor* e : enums) {
    out << "\n### " << e->name() << "\n";
    const std::string about = comment_of(comments, e->full_name());
    if (!about.empty()) out << "\n" << about << "\n";
    out << "\n| value | meaning |\n|---|---|\n";
    for (int k = 0; k < e->value_count(); ++k) {
      out << "| `" << e->value(k)->name() << "` | "
          << comment_of(comments, e->full_name() + "." + e->value(k)->name()) << " |\n";
    }
  }
  // The value types, once.
  out << "\n## Value types (geometry.proto)\n\nHow a task file writes a vector, a rotation or a "
         "pose. A field's unit, frame and range above apply to each of its numbers.\n";
  const pb::FileDescriptor* geometry =
      pb::DescriptorPool::generated_pool()->FindFileByName(std::string(kGeometryFile));
  for (int i = 0; geometry != nullptr && i < geometry->message_type_count(); ++i) {
    const pb::Descriptor* m = geometry->message_type(i);
    out << "\n### " << m->name() << "\n";
    const std::string about = comment_of(comments, m->full_name());
    if (!about.empty()) out << "\n" << about << "\n";
    out << "\n| field | type | meaning |\n|---|---|---|\n";
    for (int k = 0; k < m->field_count(); ++k) {
      const pb::FieldDescriptor* f = m->field(k);
      out << "| `" << f->name() << "` | " << type_name(f) << " | "
          << comment_of(comments, m->full_name() + "." + f->name()) << " |\n";
    }
  }
  return out.str();
}

}  // namespace tether::proto
