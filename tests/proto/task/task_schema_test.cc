// The task schema's declared ranges ((tether.v1.spec) in proto/tether/v1/) against what
// validation does: every numeric field declares one, the table compiled into the control
// core is that declaration, and each range holds at its boundary — a value just outside is
// refused at the field, naming the declared range, and a value on or just inside is not
// refused for it. A range changed in the .proto without the code following (or a check in
// code that disagrees with the declaration) fails here; the reference page is checked
// against the same declarations by TaskReference.PageIsCurrent (tests/proto/task/tests.cmake).

#include "tether/proto/task_schema.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tether/common/urdf_loader.h"
#include "tether/proto/task_io.h"
#include "tether/remote/task/schema.h"
#include "tether/remote/task/validation.h"
#include "tether/v1/task.pb.h"

namespace tether::proto {
namespace {

namespace fs = std::filesystem;
namespace pb = google::protobuf;

const KinematicModel& iiwa() {
  static const KinematicModel model(load_default_arm());
  return model;
}

// The tasks a probe starts from: the defaults, and every shipped task (between them each
// behaviour is enabled somewhere, and each repeated field has an element).
struct Base {
  std::string name;
  v1::TaskParameters message;
};
const std::vector<Base>& bases() {
  static const std::vector<Base> all = [] {
    std::vector<Base> out;
    TaskParameters defaults;
    defaults.name = "defaults";
    out.push_back({"defaults", from_task(defaults)});
    const fs::path dir = fs::path(TETHER_SOURCE_DIR) / "remote_site" / "tasks";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".textproto") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      out.push_back({f.filename().string(), from_task(load_valid_task_file(f.string(), iiwa()))});
    }
    // The wave-variable reflection's fields are checked only when it is chosen.
    v1::TaskParameters wave = out.back().message;
    for (const Base& b : out) {
      if (b.message.has_teleoperation() && b.message.teleoperation().enabled()) wave = b.message;
    }
    wave.mutable_teleoperation()->mutable_reflection()->set_method(v1::REFLECTION_METHOD_WAVE);
    out.push_back({"teleoperation with wave reflection", wave});
    // Configuration control with a function of each kind that reads a joint, a point or knots.
    v1::TaskParameters configuration = out.front().message;
    const bool parsed = google::protobuf::TextFormat::MergeFromString(
        R"pb(resolver {
               kind: RESOLVER_KIND_CONFIGURATION_CONTROL
               configuration_control {
                 functions {
                   kind: KINEMATIC_FUNCTION_KIND_ARM_POINT
                   joint: 3
                   axes { x: 1 y: 0 z: 0 }
                   target { x: 0.4 }
                 }
                 functions {
                   kind: KINEMATIC_FUNCTION_KIND_JOINT_ANGLE
                   weights {
                     time_s: 0
                     weights { values: [ 1, 1, 1, 1, 1, 1, 1 ] }
                   }
                 }
               }
             })pb",
        &configuration);
    if (!parsed) throw std::runtime_error("the configuration-control base does not parse");
    out.push_back({"configuration control", configuration});
    // The same functions the other way round: the knots' function first.
    auto* functions =
        configuration.mutable_resolver()->mutable_configuration_control()->mutable_functions();
    functions->SwapElements(0, 1);
    out.push_back({"configuration control, knots first", configuration});
    return out;
  }();
  return all;
}

// Sets every number of a vector value (Vector3, Twist, Wrench, MotionVector, JointVector).
bool set_every_number(pb::Message& value, double v) {
  const pb::Descriptor* d = value.GetDescriptor();
  const pb::Reflection* r = value.GetReflection();
  bool any = false;
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated()) {
      any = set_every_number(*r->MutableMessage(&value, f), v) || any;
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE && f->is_repeated()) {
      r->ClearField(&value, f);
      for (int j = 0; j < kArmDof; ++j) r->AddDouble(&value, f, v);  // JointVector
      any = true;
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
      r->SetDouble(&value, f, v);
      any = true;
    }
  }
  return any;
}

// Sets the numbers of the field at `path` ("a.b[].c", the first element of each
// repeated field) to `value`: the number, or every number of a vector. False when the base has no
// such element.
bool set_numbers(pb::Message& root, const std::string& path, double value) {
  pb::Message* m = &root;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    std::string segment = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const bool element = segment.size() > 2 && segment.ends_with("[]");
    if (element) segment.resize(segment.size() - 2);
    const pb::Reflection* r = m->GetReflection();
    const pb::FieldDescriptor* f = m->GetDescriptor()->FindFieldByName(segment);
    if (f == nullptr) return false;
    if (dot == std::string::npos) {
      // The field itself: a number, or the first number of a vector value.
      switch (f->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
          r->SetDouble(m, f, value);
          return true;
        case pb::FieldDescriptor::CPPTYPE_FLOAT:
          r->SetFloat(m, f, static_cast<float>(value));
          return true;
        case pb::FieldDescriptor::CPPTYPE_INT32:
          r->SetInt32(m, f, static_cast<std::int32_t>(value));
          return true;
        case pb::FieldDescriptor::CPPTYPE_UINT32:
          r->SetUInt32(m, f, static_cast<std::uint32_t>(value));
          return true;
        case pb::FieldDescriptor::CPPTYPE_INT64:
          r->SetInt64(m, f, static_cast<std::int64_t>(value));
          return true;
        case pb::FieldDescriptor::CPPTYPE_UINT64:
          r->SetUInt64(m, f, static_cast<std::uint64_t>(value));
          return true;
        case pb::FieldDescriptor::CPPTYPE_MESSAGE:
          // A vector value: every number of it (a value left out would read as zeros).
          return set_every_number(*r->MutableMessage(m, f), value);
        default:
          return false;
      }
    }
    if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return false;
    if (element) {
      if (r->FieldSize(*m, f) == 0) return false;
      m = r->MutableRepeatedMessage(m, f, 0);
    } else {
      m = r->MutableMessage(m, f);
    }
    start = dot + 1;
  }
}

bool is_integer(const SchemaField& f) {
  const auto t = f.descriptor->cpp_type();
  return t == pb::FieldDescriptor::CPPTYPE_INT32 || t == pb::FieldDescriptor::CPPTYPE_INT64 ||
         t == pb::FieldDescriptor::CPPTYPE_UINT32 || t == pb::FieldDescriptor::CPPTYPE_UINT64;
}

std::string instance(std::string path) {
  for (std::size_t at = path.find("[]"); at != std::string::npos; at = path.find("[]", at)) {
    path.replace(at, 2, "[0]");
  }
  return path;
}

// What validation says at `path` (or inside it) when the field's first number is `value`;
// nullopt when the base has no such field or conversion refused the value.
struct Outcome {
  bool applied = false;
  std::vector<std::string> messages;  // issues at the field
  std::string conversion_error;
};
Outcome probe(const Base& base, const SchemaField& field, double value) {
  Outcome out;
  v1::TaskParameters message = base.message;
  if (!set_numbers(message, field.path, value)) return out;
  out.applied = true;
  const std::string at = instance(field.path);
  try {
    for (const ValidationIssue& issue : validate_task(to_task(message), iiwa())) {
      const std::string& f = issue.field;
      if (f.starts_with(at) &&
          (f.size() == at.size() || f[at.size()] == '.' || f[at.size()] == '[')) {
        out.messages.push_back(issue.message);
      }
    }
  } catch (const std::exception& e) {
    out.conversion_error = e.what();
  }
  return out;
}

// Whether `message` is validation's refusal for the declared rule (and not a rule on other
// fields that happens to start alike, "must be finite and > 0.002 s (2·period_s …)").
bool names_rule(const std::string& message, const std::string& requirement) {
  const std::size_t at = message.find(": " + requirement);
  if (at == std::string::npos) return false;
  const std::size_t end = at + 2 + requirement.size();
  return end == message.size() || message[end] == ' ';
}

std::string joined(const std::vector<std::string>& messages) {
  std::string s;
  for (const std::string& m : messages) s += "\n    " + m;
  return s.empty() ? " (none)" : s;
}

TEST(TaskSchema, EveryNumericFieldDeclaresItsRangeAndTheCompiledTableIsThatDeclaration) {
  int numeric = 0;
  for (const SchemaField& f : task_schema()) {
    if (!f.numeric) continue;
    ++numeric;
    ASSERT_TRUE(f.has_spec) << f.path << " (" << f.type << ") has no (tether.v1.spec)";
    const FieldRule* rule = find_field_rule(f.path);
    ASSERT_NE(rule, nullptr) << f.path << " is missing from the compiled table";
    EXPECT_EQ(rule->path, f.path);
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(rule->min, f.spec.has_min() ? f.spec.min() : -inf) << f.path;
    EXPECT_EQ(rule->max, f.spec.has_max() ? f.spec.max() : inf) << f.path;
    EXPECT_EQ(rule->unit, f.spec.unit()) << f.path;
    EXPECT_EQ(rule->min_exclusive, f.spec.min_exclusive()) << f.path;
    EXPECT_EQ(rule->max_exclusive, f.spec.max_exclusive()) << f.path;
    EXPECT_EQ(rule->infinite_allowed, f.spec.infinite_allowed()) << f.path;
  }
  EXPECT_EQ(static_cast<std::size_t>(numeric), field_rules().size());
}

TEST(TaskSchema, EveryShippedTaskIsValidSoItCanBeAProbesBase) {
  for (const Base& b : bases()) {
    const auto issues = validate_task(to_task(b.message), iiwa());
    EXPECT_TRUE(issues.empty()) << b.name << ": " << issues.front().message;
  }
}

TEST(TaskSchema, EveryDeclaredRangeIsEnforcedAtItsBoundary) {
  int probed = 0;
  for (const SchemaField& f : task_schema()) {
    if (!f.numeric || !f.has_spec) continue;
    const FieldRule* rule = find_field_rule(f.path);
    ASSERT_NE(rule, nullptr) << f.path;
    const bool integer = is_integer(f);
    struct Probe {
      double value;
      bool allowed;
      const char* what;
    };
    std::vector<Probe> probes;
    const auto step = [&](double v) { return integer ? 1.0 : std::max(1e-9, std::abs(v) * 1e-6); };
    if (f.spec.has_min()) {
      const double m = f.spec.min();
      probes.push_back({f.spec.min_exclusive() ? m : m - step(m), false, "below its minimum"});
      probes.push_back({f.spec.min_exclusive() ? m + step(m) : m, true, "at its minimum"});
    }
    if (f.spec.has_max()) {
      const double m = f.spec.max();
      probes.push_back({f.spec.max_exclusive() ? m : m + step(m), false, "above its maximum"});
      probes.push_back({f.spec.max_exclusive() ? m - step(m) : m, true, "at its maximum"});
    }
    if (!integer) {
      probes.push_back({std::numeric_limits<double>::quiet_NaN(), false, "NaN"});
      if (!f.spec.infinite_allowed()) {
        probes.push_back({std::numeric_limits<double>::infinity(), false, "+infinity"});
      }
    }
    for (const Probe& p : probes) {
      // Refusals must happen in some base (a behaviour's fields may be checked only where it is
      // enabled); an allowed value must be refused for its range in none.
      bool refused_somewhere = false;
      bool applied_somewhere = false;
      std::string seen;
      for (const Base& b : bases()) {
        const Outcome o = probe(b, f, p.value);
        if (!o.applied) continue;
        applied_somewhere = true;
        bool refused_for_range = false;
        for (const std::string& m : o.messages) {
          if (names_rule(m, rule->requirement(integer))) refused_for_range = true;
        }
        if (p.allowed) {
          EXPECT_FALSE(refused_for_range)
              << f.path << " = " << p.value << " (" << p.what << ", allowed by its declaration "
              << allowed_text(f) << ") refused in base '" << b.name << "':" << joined(o.messages);
        } else if (!o.messages.empty() || !o.conversion_error.empty()) {
          refused_somewhere = true;
          if (std::isfinite(p.value)) {
            EXPECT_TRUE(refused_for_range || !o.conversion_error.empty())
                << f.path << " = " << p.value << " (" << p.what << ") refused in base '" << b.name
                << "' without its declared rule '" << rule->requirement(integer)
                << "':" << joined(o.messages);
          }
        }
        seen += "\n  " + b.name + ":" + joined(o.messages) + o.conversion_error;
        if (!p.allowed && refused_somewhere) break;
      }
      ASSERT_TRUE(applied_somewhere) << f.path << ": no base task has this field to probe";
      if (!p.allowed) {
        EXPECT_TRUE(refused_somewhere)
            << f.path << " = " << p.value << " (" << p.what << ", outside its declaration "
            << allowed_text(f) << ") is accepted by validation" << seen;
      }
      ++probed;
    }
  }
  EXPECT_GT(probed, 100);
}

}  // namespace
}  // namespace tether::proto
