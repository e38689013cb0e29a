#pragma once

// tether.v1.RemoteSite messages <-> the ground station's domain types (site_types.h), in
// both directions so the conversions can be checked by round trips. The only place in
// local_site where generated types meet domain types; include it from .cc files only.
//
// Replies are converted leniently — a site reports what it measured, NaN included
// (proto::NonFinite::kKeep) — except that a joint vector must have 0 (absent) or 7 values
// and enums must be known; otherwise proto::ConversionError names the field. Geometry and
// the shared enums (ExecutorState, BreachCause, Behaviour, ResolverKind, TeleopMode) go
// through tether::proto (convert.h, task_io.h); only the ground's own types are here.

#include "tether/local/hand_controller/operator_input.h"
#include "tether/local/link/site_types.h"
#include "tether/local/teleop/teleop_session.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::local::wire {

Breach to_domain(const v1::Breach& breach);
LoopTiming to_domain(const v1::LoopTiming& timing);
SiteStatus to_domain(const v1::SiteStatus& status);
TaskSummary to_domain(const v1::TaskSummary& summary);
TelemetrySample to_domain(const v1::Telemetry& telemetry);

void to_wire(const Breach& breach, v1::Breach* out);
void to_wire(const LoopTiming& timing, v1::LoopTiming* out);
void to_wire(const SiteStatus& status, v1::SiteStatus* out);
void to_wire(const TaskSummary& summary, v1::TaskSummary* out);
void to_wire(const TelemetrySample& sample, v1::Telemetry* out);

// The teleoperation stream: an operator increment out, force reflection in.
void to_wire(const OperatorIncrement& increment, std::uint64_t sequence,
             std::int64_t ground_time_ns, v1::TeleopIncrement* out);
// The ground's side of the force-reflection channel, on the same increment.
void to_wire(const MasterChannel& channel, v1::TeleopIncrement* out);
ReflectionSample to_domain(const v1::ForceReflection& reflection);
// A reflection as this station took it (a datagram's fields, or a stream message's), for
// recordings: to_domain(to_wire(r)) == r.
void to_wire(const ReflectionSample& reflection, v1::ForceReflection* out);

// The datagram plane carries these enums as their tether.v1 numbers.
int wire_mode(TeleopMode mode);
// An unknown number gives kUnspecified / `otherwise`.
ExecutorState to_executor_state(std::uint8_t number);
TeleopMode to_mode(std::uint8_t number, TeleopMode otherwise);

}  // namespace tether::local::wire
