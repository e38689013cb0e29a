#include "tether/proto/task_diff.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tether/common/units.h"
#include "tether/proto/convert.h"
#include "tether/proto/task_io.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr const char* kDefault = "(default)";
constexpr const char* kNone = "(none)";

// Equal within what a change of units can leave behind (35 · 0.02 is not 0.7 in binary).
bool same(double a, double b) {
  if (a == b) return true;
  return std::abs(a - b) <= std::max(1e-12, 1e-10 * std::max(std::abs(a), std::abs(b)));
}

std::string number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.12g", v);
  return text;
}

// One line of text format, e.g. "time_s: 2 pose { position { x: 0.1 } }".
std::string one_line(const Message& m) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  printer.SetUseShortRepeatedPrimitives(true);
  std::string text;
  printer.PrintToString(m, &text);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// The value of a scalar field, or of element `index` of a list (index ≥ 0).
std::string value_text(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool element = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return number(element ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return number(element ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(element ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(element ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return std::to_string(element ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return std::to_string(element ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (element ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM:
      return (element ? r->GetRepeatedEnum(m, f, index) : r->GetEnum(m, f))->name();
    case FieldDescriptor::CPPTYPE_STRING: {
      // Appended piecewise: GCC 12's -Wrestrict misfires on `"literal" + std::string`.
      std::string text = "\"";
      text += element ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      text += '"';
      return text;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "{ " + one_line(element ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f)) +
             " }";
  }
  return "?";
}

bool same_value(const Message& a, const Message& b, const FieldDescriptor* f, int index) {
  const Reflection* ra = a.GetReflection();
  const Reflection* rb = b.GetReflection();
  const bool element = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return element ? same(ra->GetRepeatedDouble(a, f, index), rb->GetRepeatedDouble(b, f, index))
                     : same(ra->GetDouble(a, f), rb->GetDouble(b, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return element ? same(ra->GetRepeatedFloat(a, f, index), rb->GetRepeatedFloat(b, f, index))
                     : same(ra->GetFloat(a, f), rb->GetFloat(b, f));
    default:
      // Integers, booleans, enums and strings print exactly.
      return value_text(a, f, index) == value_text(b, f, index);
  }
}

// R = Rz(yaw) · Ry(pitch) · Rx(roll) (geometry.proto), components that are zero left out.
std::string rpy_text(const Matrix3& R) {
  const double pitch = std::asin(std::clamp(-R(2, 0), -1.0, 1.0));
  const double roll = std::atan2(R(2, 1), R(2, 2));
  const double yaw = std::atan2(R(1, 0), R(0, 0));
  std::string text = "rpy {";
  const auto add = [&text](const char* name, double radians) {
    const double degrees = radians * kRadToDeg;
    if (std::abs(degrees) > 1e-9) text += std::string(" ") + name + ": " + number(degrees);
  };
  add("roll_deg", roll);
  add("pitch_deg", pitch);
  add("yaw_deg", yaw);
  return text + " }";
}

class Walker {
 public:
  std::vector<TaskDifference> differences;

  void message(const Message& a, const Message& b, const FieldPath& path) {
    const google::protobuf::Descriptor* d = a.GetDescriptor();
    const Reflection* ra = a.GetReflection();
    const Reflection* rb = b.GetReflection();
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      const FieldPath p = path.field(f->name());
      if (f->is_repeated()) {
        list(a, b, f, p);
        continue;
      }
      const bool ha = f->has_presence() && ra->HasField(a, f);
      const bool hb = f->has_presence() && rb->HasField(b, f);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (!ha && !hb) continue;
        if (f->message_type() == v1::Rotation::descriptor()) {
          rotation(ha ? &ra->GetMessage(a, f) : nullptr, hb ? &rb->GetMessage(b, f) : nullptr, p);
        } else {
          // An absent section is compared as its defaults, so each field it would change shows.
          message(ra->GetMessage(a, f), rb->GetMessage(b, f), p);
        }
        continue;
      }
      if (f->has_presence()) {
        if (!ha && !hb) continue;
        if (ha != hb) {
          add(p, ha ? value_text(a, f, -1) : kDefault, hb ? value_text(b, f, -1) : kDefault);
          continue;
        }
      }
      if (!same_value(a, b, f, -1)) add(p, value_text(a, f, -1), value_text(b, f, -1));
    }
  }

 private:
  void add(const FieldPath& path, std::string from, std::string to) {
    differences.push_back(TaskDifference{path, std::move(from), std::move(to)});
  }

  void list(const Message& a, const Message& b, const FieldDescriptor* f, const FieldPath& p) {
    const int na = a.GetReflection()->FieldSize(a, f);
    const int nb = b.GetReflection()->FieldSize(b, f);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      for (int k = 0; k < std::max(na, nb); ++k) {
        if (k < na && k < nb) {
          message(a.GetReflection()->GetRepeatedMessage(a, f, k),
                  b.GetReflection()->GetRepeatedMessage(b, f, k), p.element(k));
        } else {
          add(p.element(k), k < na ? value_text(a, f, k) : kNone,
              k < nb ? value_text(b, f, k) : kNone);
        }
      }
      return;
    }
    if (na == nb) {
      for (int k = 0; k < na; ++k) {
        if (!same_value(a, b, f, k)) add(p.element(k), value_text(a, f, k), value_text(b, f, k));
      }
      return;
    }
    // A list of another length (a joint vector left out on one side): the whole list.
    const auto whole = [f](const Message& m, int n) {
      if (n == 0) return std::string(kDefault);
      std::string text = "[";
      for (int k = 0; k < n; ++k) text += (k ? ", " : "") + value_text(m, f, k);
      return text + "]";
    };
    add(p, whole(a, na), whole(b, nb));
  }

  void rotation(const Message* a, const Message* b, const FieldPath& p) {
    const auto matrix = [&p](const Message* m) -> Matrix3 {
      if (m == nullptr) return Matrix3::Identity();
      return to_rotation(static_cast<const v1::Rotation&>(*m), p.to_string());
    };
    const Matrix3 Ra = matrix(a);
    const Matrix3 Rb = matrix(b);
    if ((Ra - Rb).cwiseAbs().maxCoeff() <= 1e-9) return;
    add(p, a == nullptr ? kDefault : rpy_text(Ra), b == nullptr ? kDefault : rpy_text(Rb));
  }
};

}  // namespace

std::vector<TaskDifference> diff_tasks(const TaskParameters& from, const TaskParameters& to) {
  const v1::TaskParameters a = from_task(from);
  const v1::TaskParameters b = from_task(to);
  Walker walker;
  walker.message(a, b, FieldPath());
  return walker.differences;
}

std::string format_differences(const std::vector<TaskDifference>& differences) {
  if (differences.empty()) return "  (no differences)\n";
  std::string out;
  for (const TaskDifference& d : differences) {
    out += "  " + d.path.to_string() + ": " + d.from + " → " + d.to + "\n";
  }
  return out;
}

}  // namespace tether::proto
