#include "tether/common/vocabulary.h"

namespace tether {

// Every switch below names every enumerator and has no default, so -Wswitch (-Wall) turns
// a new enumerator without a name into a build error. The "unknown" after each switch is
// for a value cast from outside the enumeration.

const char* to_string(ExecutorState state) {
  switch (state) {
    case ExecutorState::kUnspecified:
      return "unspecified";
    case ExecutorState::kIdle:
      return "idle";
    case ExecutorState::kRunning:
      return "running";
    case ExecutorState::kStopping:
      return "stopping";
    case ExecutorState::kStopped:
      return "stopped";
    case ExecutorState::kRecovering:
      return "recovering";
  }
  return "unknown";
}

const char* to_string(BreachCause cause) {
  switch (cause) {
    case BreachCause::kNone:
      return "none";
    case BreachCause::kTranslationDeviation:
      return "translation deviation";
    case BreachCause::kRotationDeviation:
      return "rotation deviation";
    case BreachCause::kArmAngleDeviation:
      return "arm-angle deviation";
    case BreachCause::kForce:
      return "force";
    case BreachCause::kTorque:
      return "torque";
    case BreachCause::kProximityTooClose:
      return "proximity too close";
    case BreachCause::kProximityTooFar:
      return "proximity too far";
    case BreachCause::kJointLimitMargin:
      return "joint-limit margin";
    case BreachCause::kLoopOverrun:
      return "control-loop overrun";
    case BreachCause::kTeleoperationStalled:
      return "teleoperation stream stalled";
    case BreachCause::kArmFault:
      return "arm fault";
    case BreachCause::kResolverSingular:
      return "resolver singular";
    case BreachCause::kNonFinite:
      return "non-finite value";
    case BreachCause::kOperatorStop:
      return "operator stop";
    case BreachCause::kDeadmanReleased:
      return "deadman released";
    case BreachCause::kGroundLinkLost:
      return "ground link lost";
    case BreachCause::kVisualTargetLost:
      return "visual target lost";
    case BreachCause::kInvalidIncrement:
      return "invalid increment";
  }
  return "unknown";
}

const char* to_string(ResolverKind kind) {
  switch (kind) {
    case ResolverKind::kDls:
      return "dls";
    case ResolverKind::kConfigurationControl:
      return "configuration control";
    case ResolverKind::kConstrainedOptimisation:
      return "constrained optimisation";
    case ResolverKind::kShake:
      return "shake";
  }
  return "unknown";
}

const char* to_string(Role role) {
  switch (role) {
    case Role::kNone:
      return "none";
    case Role::kObserver:
      return "observer";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "unknown";
}

bool parse_role(std::string_view text, Role& role) {
  for (const Role r : {Role::kNone, Role::kObserver, Role::kOperator, Role::kAdmin}) {
    if (text == to_string(r)) {
      role = r;
      return true;
    }
  }
  return false;
}

const char* unit_of(BreachCause cause) {
  switch (cause) {
    case BreachCause::kTranslationDeviation:
    case BreachCause::kProximityTooClose:
    case BreachCause::kProximityTooFar:
      return "m";
    case BreachCause::kRotationDeviation:
    case BreachCause::kArmAngleDeviation:
    case BreachCause::kJointLimitMargin:
      return "rad";
    case BreachCause::kForce:
      return "N";
    case BreachCause::kTorque:
      return "N·m";
    case BreachCause::kTeleoperationStalled:
    case BreachCause::kVisualTargetLost:
      return "s";
    case BreachCause::kLoopOverrun:
      return "cycles";
    case BreachCause::kNone:
    case BreachCause::kArmFault:
    case BreachCause::kResolverSingular:
    case BreachCause::kNonFinite:
    case BreachCause::kOperatorStop:
    case BreachCause::kDeadmanReleased:
    case BreachCause::kGroundLinkLost:
    case BreachCause::kInvalidIncrement:
      return "";
  }
  return "";
}

const char* to_string(DataPlane plane) {
  switch (plane) {
    case DataPlane::kNone:
      return "none";
    case DataPlane::kStream:
      return "stream";
    case DataPlane::kDatagram:
      return "datagram";
  }
  return "unknown";
}

}  // namespace tether
