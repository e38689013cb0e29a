#pragma once

// The words both sites use about a running task: the executor's state, why an arm was
// stopped and the resolver kinds. The behaviour kinds are generated from the list of
// behaviours (tether/remote/behaviours/list.h in tether::control, which both sites link).
// Each is defined once, here, with the one lower-case name operators read in messages,
// recordings and the console ("running", "arm-angle deviation", "configuration control"). The
// remote site's executor produces these values; the ground station receives them through
// tether.v1 (proto/tether/v1/remote_site.proto), converted in tether::proto (convert.h).
//
// The enumerators are listed in the order of their tether.v1 counterparts, but no code may
// rely on equal numbers: the conversions in tether::proto name every pair.

#include <cstdint>
#include <string_view>

namespace tether {

// The remote executor's state (tether.v1.ExecutorState).
enum class ExecutorState : std::uint8_t {
  // Only for a message that did not say (tether.v1's EXECUTOR_STATE_UNSPECIFIED). The
  // executor never reports it: it starts in kIdle and moves between the five below.
  kUnspecified,
  kIdle,        // no task: holding the last command
  kRunning,     // executing a task
  kStopping,    // controlled stop in progress
  kStopped,     // stopped and latched until reset
  kRecovering,  // still latched, moving out of the breach at the operator's request
};

// Why the remote site stopped the arm (tether.v1.BreachCause). The bounds monitor checks
// them in this order and reports the first one breached. Units of the measured value and
// of the bound in the comments (see unit_of()).
enum class BreachCause : std::uint8_t {
  kNone,
  kTranslationDeviation,  // |p_actual − p_r| [m]
  kRotationDeviation,     // angle of R_actual R_rᵀ [rad]
  kArmAngleDeviation,     // |ψ_actual − ψ_r| [rad]
  kForce,                 // |f| at the MOTION origin [N]
  kTorque,                // |τ| about the MOTION origin [N·m]
  kProximityTooClose,     // distance [m]
  kProximityTooFar,       // distance [m] (or no reading while a window is set)
  kJointLimitMargin,      // distance of a joint to its limit [rad]; the joint is reported
  kLoopOverrun,           // consecutive deadline misses [cycles]
  kTeleoperationStalled,  // time since the last hand-controller sample [s]
  kArmFault,              // the arm interface reported a fault or lost communication
  kResolverSingular,      // the DLS normal matrix was singular
  kNonFinite,             // NaN or infinity anywhere in the cycle
  kOperatorStop,          // stop requested by the operator
  kDeadmanReleased,       // a hand-controller sample arrived with the enable switch released
  kGroundLinkLost,        // the teleoperation stream from the ground closed
  kVisualTargetLost,      // time since the camera last saw the visual-tracking target [s]
  kInvalidIncrement,      // a hand-controller increment failed validation: stream refused
};

// Which redundancy resolver turns the impedance law's ẋ_c (7-D, MOTION axes) into joint
// velocities each cycle (remote_site/control/.../resolvers/<name>/). Every resolver honours
// obstacle_avoidance when its constrain_resolver is set.
enum class ResolverKind {
  kDls,  // eq. 13 on the composite Jacobian (the extended-task-space patent); the default
  kConfigurationControl,     // augmented Jacobian of user kinematic functions (the
                             // configuration-control patent)
  kConstrainedOptimisation,  // per-cycle optimisation with achieved fraction p (the
                             // constrained-optimisation patent)
  kShake,                    // SHAKE + annealing on the S-R-S point chain (the SHAKE patent)
};

// What a caller of a remote site may do, from the site's roles file (identity -> role).
// Each role includes the rights of those before it. Every authenticated identity, with a
// role or without, may stop the arm and ask the site's health.
enum class Role : std::uint8_t {
  kNone,      // authenticated but not in the roles file: stop and health only
  kObserver,  // status, telemetry, list, get, audit trail, server reflection
  kOperator,  // + control lease, upload, start, set, update, reset, teleoperate
  kAdmin,     // + delete, and taking the lease over from another operator
};

// The plane a teleoperation session's increments travel on (tether.v1.DataPlane): the
// Teleoperate gRPC stream (TCP), or the authenticated datagrams it opened (UDP).
enum class DataPlane : std::uint8_t {
  kNone,      // no increment taken yet
  kStream,    // the gRPC stream
  kDatagram,  // the datagram plane
};

// Lower-case names for operators: "running", "control-loop overrun", "configuration
// control". Every enumerator has its own name; "unknown" only for a value
// outside the enumeration.
const char* to_string(ExecutorState state);
const char* to_string(BreachCause cause);
const char* to_string(ResolverKind kind);
const char* to_string(Role role);        // "none", "observer", "operator", "admin"
const char* to_string(DataPlane plane);  // "none", "stream", "datagram"
// The role spelt as to_string() spells it; false for anything else.
bool parse_role(std::string_view text, Role& role);

// Unit of a breach's measured value and bound as written after the numbers: "m", "rad",
// "N", "N·m", "s", "cycles"; empty for causes that carry no value (arm fault, operator
// stop, ...).
const char* unit_of(BreachCause cause);

}  // namespace tether
