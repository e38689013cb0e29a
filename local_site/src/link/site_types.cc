#include "tether/local/link/site_types.h"

namespace tether::local {

const char* to_string(SiteState state) {
  switch (state) {
    case SiteState::kUnspecified:
      return "unspecified";
    case SiteState::kIdle:
      return "idle";
    case SiteState::kRunning:
      return "running";
    case SiteState::kStopping:
      return "stopping";
    case SiteState::kStopped:
      return "stopped";
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
      return "arm angle deviation";
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
      return "loop overrun";
    case BreachCause::kTeleoperationStalled:
      return "teleoperation stalled";
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

const char* to_string(Behaviour behaviour) {
  switch (behaviour) {
    case Behaviour::kUnspecified:
      return "unspecified";
    case Behaviour::kTrajectory:
      return "trajectory";
    case Behaviour::kSpringTrajectory:
      return "spring trajectory";
    case Behaviour::kTeleoperation:
      return "teleoperation";
    case Behaviour::kForceControl:
      return "force control";
    case Behaviour::kJointLimitAvoidance:
      return "joint-limit avoidance";
    case Behaviour::kSingularityAvoidance:
      return "singularity avoidance";
    case Behaviour::kSingularityRobustness:
      return "singularity robustness";
    case Behaviour::kDither:
      return "dither";
    case Behaviour::kProximity:
      return "proximity";
    case Behaviour::kManipulability:
      return "manipulability";
    case Behaviour::kObstacleAvoidance:
      return "obstacle avoidance";
  }
  return "unknown";
}

}  // namespace tether::local
