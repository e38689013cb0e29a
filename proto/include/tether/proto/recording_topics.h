#pragma once

// The channels of tether's MCAP recordings, one vocabulary for both sites' writers and every
// reader (`tether replay`, `tether export`, the tests). Topic names follow ROS and Foxglove
// conventions (a leading slash, lower case); every channel's messages are the protobuf type
// named beside it, its schema (a FileDescriptorSet) stored in the file. docs/recordings.md
// lists them for people opening a file in Foxglove or PlotJuggler.

namespace tether::recording {

// The remote site: every control cycle (tether.v1.Telemetry, with its CycleInputs and, at a
// task's start, the arm's checkpoint), log time = the cycle's sample_unix_ns.
inline constexpr const char* kTelemetry = "/tether/telemetry";
// Increments as the remote took them into the executor's queue (tether.v1.RecordedIncrement).
inline constexpr const char* kRemoteIncrements = "/tether/remote/increments";
// State changes and breaches (tether.v1.SiteEvent).
inline constexpr const char* kEvents = "/tether/events";
// The site's audit trail, a JSON line a message (tether.v1.AuditEvent).
inline constexpr const char* kAudit = "/tether/audit";
// Task sets as the executor took them (tether.v1.RecordedTask).
inline constexpr const char* kTasks = "/tether/tasks";
// The ground: increments as sent (tether.v1.SentIncrement) and reflections as received
// (tether.v1.ForceReflection), log time = the ground's clock when it sent or received them.
inline constexpr const char* kGroundIncrements = "/tether/ground/increments";
inline constexpr const char* kGroundReflections = "/tether/ground/reflections";

// Metadata record naming the site, its arm and scene, and which writer made the file.
inline constexpr const char* kSiteMetadata = "tether.site";

}  // namespace tether::recording
