#include "tether/remote/arm/arm_interface.h"

namespace tether::remote {

const char* to_string(ArmStatus status) {
  switch (status) {
    case ArmStatus::kOk:
      return "ok";
    case ArmStatus::kNotReady:
      return "not ready";
    case ArmStatus::kCommunicationLost:
      return "communication lost";
    case ArmStatus::kFault:
      return "arm fault";
  }
  return "unknown";
}

}  // namespace tether::remote
