#pragma once

// Protobuf messages in MCAP recordings (tether/mcap/writer.h), the way Foxglove, PlotJuggler
// and the `mcap` CLI decode them: a channel's message_encoding "protobuf", its schema's
// encoding "protobuf", name the message's full name (e.g. "tether.v1.Telemetry") and data a
// serialized google.protobuf.FileDescriptorSet holding the message's .proto file and every
// file it imports, transitively.

#include <google/protobuf/descriptor.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tether/mcap/writer.h"

namespace tether::proto {

// A serialized FileDescriptorSet: d's file and all of its transitive dependencies, each once,
// every file after the files it imports (the order protoc's --include_imports gives).
std::string protobuf_schema(const google::protobuf::Descriptor& d);

// Adds a channel on `topic` carrying M (a generated message type) to `writer`, with M's
// schema: the schema is written once per writer (add_schema returns the id of an identical
// schema added before), the channel once per call.
template <class M>
std::uint16_t add_protobuf_channel(tether::mcap::Writer& writer, std::string_view topic) {
  const google::protobuf::Descriptor& d = *M::descriptor();
  static const std::string kSchema = protobuf_schema(d);  // per type, built on first use
  const std::uint16_t schema_id = writer.add_schema(d.full_name(), "protobuf", kSchema);
  return writer.add_channel(schema_id, topic, "protobuf");
}

}  // namespace tether::proto
