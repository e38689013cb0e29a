#pragma once

// The remote site's edge: the one place where tether.v1 service messages are converted to
// and from the executor's domain types. Nothing outside src/server includes a generated
// header.

#include <cstdint>
#include <string>
#include <vector>

#include "tether/datagram/teleop_datagram.h"
#include "tether/remote/behaviours/teleoperation/teleoperation.h"
#include "tether/remote/loop/executor.h"
#include "tether/remote/task/task_parameters.h"
#include "tether/v1/remote_site.pb.h"

namespace tether::remote::server {

// The shared enums (ExecutorState, BreachCause, Behaviour, ResolverKind) convert in
// tether::proto (convert.h, task_io.h); what is here is the remote site's own.
void to_wire(const BreachEvent& event, v1::Breach* out);
// tether::enabled_behaviours(task) as wire values, computed once per task for its telemetry.
std::vector<v1::Behaviour> enabled_behaviours(const TaskParameters& task);

// Every cycle's record as sent on the telemetry stream.
void to_wire(const CycleTelemetry& cycle, const std::string& task_name,
             const std::vector<v1::Behaviour>& behaviours, double period, v1::Telemetry* out);

// Force reflection for a stream whose sequence numbers start after `sequence_base`: the
// measured wrench and the tracking error rotated into the hand controller's axes, and in
// camera mode the EYE frame (and stamp) they were rotated with. `out` may be reused.
void to_reflection(const CycleTelemetry& cycle, std::uint64_t sequence_base,
                   v1::ForceReflection* out);

// Checks an increment (finite, within the per-sample limits, sequence ≥ 1, known mode) and
// converts it; returns an empty string on success, else a message naming the field, the
// value and the allowed range.
// A sample as it entered the executor's queue, for recordings (black_box.h).
void to_record(const HandControllerSample& sample, v1::RecordedIncrement* out);

std::string from_wire(const v1::TeleopIncrement& in, std::uint64_t sequence_base,
                      HandControllerSample& out);

// The datagram plane (tether/datagram/teleop_datagram.h). One sample the assembler made of
// an increment datagram, checked as from_wire() checks a stream's (the per-sample limits),
// numbered after `sequence_base`; `ground_time_ns` is the sample's (interpolated for a
// concealed one). Empty on success, else what is wrong.
std::string from_datagram(const datagram::IncrementMessage& message,
                          const datagram::ConcealedSample& sample, std::uint64_t sequence_base,
                          std::uint64_t ground_time_ns, std::int64_t arrival_ns,
                          HandControllerSample& out);
// A cycle's force reflection as a datagram; `detail` adds the measured wrench, tracking
// error, task time and the port's energies (every few cycles: the link's budget).
void to_datagram(const CycleTelemetry& cycle, std::uint64_t sequence_base, bool detail,
                 datagram::ReflectionMessage& out);

// Recovery motion: the request as checked at the edge (joint 1-7, finite numbers; the loop
// checks the direction against the breach), and the outcome as operators read it, with the
// refusal naming the direction that would deepen the breach.
std::string from_wire(const v1::RecoverRequest& in, RecoveryRequest& out);
std::string describe(const RecoveryRequest& request, BreachCause target);
std::string refusal_message(const RecoveryStatus& recovery, ExecutorState state);
void to_wire(const RecoveryStatus& recovery, const RecoveryLimits& limits, ExecutorState state,
             v1::RecoveryStatus* out);

// Largest sequence number an increment may carry (and a stream's base may reach).
inline constexpr std::uint64_t kMaxSequence = std::uint64_t{1} << 48;

}  // namespace tether::remote::server
