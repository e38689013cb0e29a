#include "tether/remote/task/task_parameters.h"

namespace tether {

const char* to_string(Behaviour behaviour) {
  switch (behaviour) {
    case Behaviour::kUnspecified:
      return "unspecified";
#define TETHER_BEHAVIOUR_NAME(field, Name, ENUM, label) \
  case Behaviour::k##Name:                              \
    return label;
      TETHER_BEHAVIOURS(TETHER_BEHAVIOUR_NAME)
#undef TETHER_BEHAVIOUR_NAME
  }
  return "unknown";
}

std::vector<Behaviour> enabled_behaviours(const TaskParameters& task) {
  std::vector<Behaviour> enabled;
#define TETHER_IF_ENABLED(field, Name, ENUM, label) \
  if (task.field.enabled) enabled.push_back(Behaviour::k##Name);
  TETHER_BEHAVIOURS(TETHER_IF_ENABLED)
#undef TETHER_IF_ENABLED
  return enabled;
}

}  // namespace tether
