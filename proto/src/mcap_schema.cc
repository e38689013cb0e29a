#include "tether/proto/mcap_schema.h"

#include <google/protobuf/descriptor.pb.h>

#include <set>
#include <utility>
#include <vector>

namespace tether::proto {

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
      if (added.insert(dependency).second) stack.emplace_back(dependency, 0);
      continue;
    }
    file->CopyTo(set.add_file());
    stack.pop_back();
  }
  return set.SerializeAsString();
}

}  // namespace tether::proto
