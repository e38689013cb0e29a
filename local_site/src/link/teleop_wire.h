#pragma once

// The ground's edge for the teleoperation stream: increments out, reflections in. Kept
// beside the rest of the ground's wire conversions so generated types stay in src/link.

#include <cstdint>

#include "tether/local/hand_controller/operator_input.h"
#include "tether/local/teleop/teleop_session.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::local::wire {

void to_wire(const OperatorIncrement& increment, std::uint64_t sequence,
             std::int64_t ground_time_ns, v1::TeleopIncrement* out);
ReflectionSample from_wire(const v1::ForceReflection& in);
const char* state_name(v1::ExecutorState state);

}  // namespace tether::local::wire
