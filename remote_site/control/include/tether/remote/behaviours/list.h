#pragma once

// The list of behaviours: the one place that names them all. Everything that handles every
// behaviour expands it instead of naming them one by one: the members of TaskParameters, the
// Behaviour vocabulary and its names, validation, the executor's reset and update, and, in
// tether::proto, the message conversions and the wire enum.
//
// A behaviour is a vertical slice:
//   remote_site/control/include/tether/remote/behaviours/<field>/parameters.h
//       its parameters (struct <Name>Parameters with `bool enabled`) and the declaration of
//       `void validate(const <Name>Parameters&, TaskChecker&)`;
//   remote_site/control/include/tether/remote/behaviours/<field>/<field>.h and
//   remote_site/control/src/behaviours/<field>/{<field>.cc, validation.cc}
//       class <Name> with `reset(params, context)` and `update(params, context, out) noexcept`
//       (behaviour.h), and its validation;
//   proto/tether/v1/behaviours/<field>.proto and proto/src/behaviours/<field>.cc
//       message tether.v1.<Name>Parameters and its conversion in both directions.
// Adding one is those files, one X(...) line and one #include below, the CMake entries, the
// import and the `<field>` field of tether.v1.TaskParameters (task.proto), and BEHAVIOUR_<ENUM>
// of tether.v1.Behaviour (remote_site.proto): two files outside the slice.
//
// X(field, Name, ENUM, "label"):
//   field  member of TaskParameters and of tether.v1.TaskParameters, and the behaviour's folder;
//   Name   class Name, struct NameParameters, message tether.v1.NameParameters, Behaviour::kName;
//   ENUM   tether.v1.Behaviour's BEHAVIOUR_ENUM;
//   label  the operator's name of the behaviour (to_string).
// The order is the schema's, and the order of update within a cycle: later reference
// producers override earlier ones (a spring trajectory over a timed one).

#include <cstdint>
#include <initializer_list>

#include "tether/remote/behaviours/dither/dither.h"
#include "tether/remote/behaviours/force_control/force_control.h"
#include "tether/remote/behaviours/joint_limit_avoidance/joint_limit_avoidance.h"
#include "tether/remote/behaviours/manipulability/manipulability.h"
#include "tether/remote/behaviours/obstacle_avoidance/obstacle_avoidance.h"
#include "tether/remote/behaviours/proximity/proximity.h"
#include "tether/remote/behaviours/singularity_avoidance/singularity_avoidance.h"
#include "tether/remote/behaviours/singularity_robustness/singularity_robustness.h"
#include "tether/remote/behaviours/spring_trajectory/spring_trajectory.h"
#include "tether/remote/behaviours/teleoperation/teleoperation.h"
#include "tether/remote/behaviours/trajectory/trajectory.h"
#include "tether/remote/behaviours/visual_tracking/visual_tracking.h"

// clang-format off
#define TETHER_BEHAVIOURS(X)                                                                   \
  X(trajectory,             Trajectory,            TRAJECTORY,             "trajectory")             \
  X(spring_trajectory,      SpringTrajectory,      SPRING_TRAJECTORY,      "spring trajectory")      \
  X(teleoperation,          Teleoperation,         TELEOPERATION,          "teleoperation")          \
  X(force_control,          ForceControl,          FORCE_CONTROL,          "force control")          \
  X(joint_limit_avoidance,  JointLimitAvoidance,   JOINT_LIMIT_AVOIDANCE,  "joint-limit avoidance")  \
  X(singularity_avoidance,  SingularityAvoidance,  SINGULARITY_AVOIDANCE,  "singularity avoidance")  \
  X(singularity_robustness, SingularityRobustness, SINGULARITY_ROBUSTNESS, "singularity robustness") \
  X(dither,                 Dither,                DITHER,                 "dither")                 \
  X(proximity,              Proximity,             PROXIMITY,              "proximity")              \
  X(manipulability,         Manipulability,        MANIPULABILITY,         "manipulability")         \
  X(obstacle_avoidance,     ObstacleAvoidance,     OBSTACLE_AVOIDANCE,     "obstacle avoidance")     \
  X(visual_tracking,        VisualTracking,        VISUAL_TRACKING,        "visual tracking")
// clang-format on

namespace tether {

// Behaviours a task enables (tether.v1.Behaviour), one per entry of the list; the shared
// vocabulary of both sites.
enum class Behaviour : std::uint8_t {
  kUnspecified,  // only for a message that did not say; no task section
#define TETHER_BEHAVIOUR_ENUMERATOR(field, Name, ENUM, label) k##Name,
  TETHER_BEHAVIOURS(TETHER_BEHAVIOUR_ENUMERATOR)
#undef TETHER_BEHAVIOUR_ENUMERATOR
};

// How many behaviours the list has; Behaviour's enumerators run from 1 to this.
#define TETHER_BEHAVIOUR_VALUE(field, Name, ENUM, label) Behaviour::k##Name,
inline constexpr int kBehaviourCount = static_cast<int>(
    std::initializer_list<Behaviour>{TETHER_BEHAVIOURS(TETHER_BEHAVIOUR_VALUE)}.size());
#undef TETHER_BEHAVIOUR_VALUE

// Lower-case name for operators ("force control", "joint-limit avoidance"); "unspecified" and
// "unknown" for values outside the list.
const char* to_string(Behaviour behaviour);

}  // namespace tether
