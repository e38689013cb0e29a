#include "tether/proto/mcap_schema.h"

#include <google/protobuf/descriptor.pb.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tether/v1/field_spec.pb.h"

namespace tether::proto {
namespace {

// What only the task schema's field options need (field_spec.proto and the descriptor.proto
// it extends): a reader decodes without them, and the options' units, ranges and texts would
// otherwise add kilobytes to every recording and black-box segment that carries a schema.
bool options_only(const std::string& name) {
  return name == "tether/v1/field_spec.proto" || name == "google/protobuf/descriptor.proto";
}

void strip_field_specs(google::protobuf::DescriptorProto& message) {
  for (google::protobuf::FieldDescriptorProto& field : *message.mutable_field()) {
    if (!field.has_options()) continue;
    field.mutable_options()->ClearExtension(v1::spec);
    if (field.options().ByteSizeLong() == 0) field.clear_options();
  }
  for (google::protobuf::DescriptorProto& nested : *message.mutable_nested_type()) {
    strip_field_specs(nested);
  }
}

}  // namespace

std::string protobuf_schema(const google::protobuf::Descriptor& d) {
  google::protobuf::FileDescriptorSet set;
  std::set<const google::protobuf::FileDescriptor*> added;
  // Depth first, a file after its imports. An explicit stack (file, next import to visit):
  // import chains are short, but recursion depth should not depend on input either way.
  std::vector<std::pair<const google::protobuf::FileDescriptor*, int>> stack;
  stack.emplace_back(d.file(), 0);
  added.insert(d.file());
  while (!stack.empty()) {
    auto& [file, next] = stack.back();
    if (next < file->dependency_count()) {
      const google::protobuf::FileDescriptor* dependency = file->dependency(next++);
      if (options_only(dependency->name())) continue;
      if (added.insert(dependency).second) stack.emplace_back(dependency, 0);
      continue;
    }
    google::protobuf::FileDescriptorProto* copy = set.add_file();
    file->CopyTo(copy);
    auto* imports = copy->mutable_dependency();
    imports->erase(std::remove_if(imports->begin(), imports->end(), options_only), imports->end());
    for (google::protobuf::DescriptorProto& message : *copy->mutable_message_type()) {
      strip_field_specs(message);
    }
    stack.pop_back();
  }
  return set.SerializeAsString();
}

}  // namespace tether::proto
