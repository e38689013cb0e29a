#include "tether/proto/set_field.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <array>
#include <optional>

#include "tether/common/task/field_path.h"

namespace tether::proto {

namespace {

// Protobuf's text parser reports through a collector; this keeps the first message.
class ParseErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int /*line*/, int column, const std::string& message) override {
    if (text.empty()) text = "column " + std::to_string(column + 1) + ": " + message;
  }
  std::string text;
};

// Fields of the task that identify it rather than parameterise it: never set this way.
constexpr std::array<const char*, 1> kIdentityFields = {"name"};

}  // namespace

void set_field(v1::TaskParameters& task, const std::string& spelled, const std::string& value) {
  if (spelled.size() > kMaxParameterPath) {
    throw ConversionError("path = '" + spelled.substr(0, 32) + "...' (" +
                          std::to_string(spelled.size()) + " characters): at most " +
                          std::to_string(kMaxParameterPath));
  }
  const std::optional<FieldPath> path = FieldPath::parse(spelled);
  if (!path) {
    throw ConversionError("path = '" + spelled +
                          "': not a field path; spell it as in the task file, e.g. "
                          "impedance.mass.rotation.x");
  }
  const std::vector<FieldPath::Segment>& segments = path->segments();
  for (const char* identity : kIdentityFields) {
    if (!segments.empty() && segments.front().name == identity) {
      throw ConversionError(*path, std::string(": identifies the task and is not a "
                                               "parameter; upload the set under another "
                                               "name instead"));
    }
  }
  if (value.size() > kMaxParameterValue) {
    throw ConversionError(spelled + " = '" + value.substr(0, 32) + "...' (" +
                          std::to_string(value.size()) + " characters): at most " +
                          std::to_string(kMaxParameterValue));
  }
  google::protobuf::Message* message = &task;
  FieldPath walked;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const std::string& name = segments[s].name;
    const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr) {
      std::string names;
      for (int i = 0; i < descriptor->field_count(); ++i) {
        names += (i ? ", " : "") + descriptor->field(i)->name();
      }
      throw ConversionError(
          *path, std::string(": ")
                     .append(walked.empty() ? std::string("the task") : walked.to_string())
                     .append(" has no field '")
                     .append(name)
                     .append("'; fields: ")
                     .append(names));
    }
    const FieldPath holder = walked;
    walked = walked.field(name);
    if (field->is_repeated()) {
      throw ConversionError(*path, ": " + walked.to_string() +
                                       " is a list; set the message that holds it, " +
                                       holder.to_string());
    }
    if (segments[s].index >= 0) {
      throw ConversionError(*path, ": " + walked.to_string() + " is not a list");
    }
    if (s + 1 == segments.size()) {
      ParseErrors errors;
      google::protobuf::TextFormat::Parser parser;
      parser.RecordErrorsTo(&errors);
      bool ok = false;
      if (field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
        google::protobuf::Message* child = message->GetReflection()->MutableMessage(message, field);
        child->Clear();
        ok = parser.ParseFromString(value, child);
      } else {
        ok = parser.ParseFieldValueFromString(value, field, message);
      }
      if (!ok) {
        throw ConversionError(*path, " = '" + value + "': not a valid " + field->type_name() +
                                         " (" + errors.text + ")");
      }
      return;
    }
    if (field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
      throw ConversionError(
          *path, ": " + walked.to_string() + " is a " + field->type_name() + ", not a message");
    }
    message = message->GetReflection()->MutableMessage(message, field);
  }
}

}  // namespace tether::proto
