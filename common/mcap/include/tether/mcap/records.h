#pragma once

// MCAP (https://mcap.dev/spec, major version 0): the constants and record contents that the
// writer (writer.h) and the reader (reader.h) share. tether's recordings are MCAP files so
// that Foxglove, PlotJuggler and the `mcap` CLI open them as they are.
//
// File layout, as tether writes it (all integers little-endian):
//   magic, Header,
//   data section: Schema and Channel records as they are added (always before the first
//     message that uses them), Chunks of Message records each followed by its Message Index
//     records, Metadata and Attachment records; Data End with the data section's CRC-32
//     (over every byte from the file's first, the leading magic, up to Data End),
//   summary: Schemas, Channels, Statistics, Metadata Indexes, Attachment Indexes, Chunk
//     Indexes (each group one run of records), one Summary Offset record per group,
//   Footer (with the summary's CRC-32), magic.
// Timestamps are nanoseconds since an epoch the recording names (tether: the Unix epoch).

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace tether::mcap {

// 0x89 "MCAP" '0' "\r\n": begins and ends every file ('0' is the major version).
inline constexpr std::array<std::uint8_t, 8> kMagic = {0x89, 'M', 'C', 'A', 'P', '0', '\r', '\n'};

enum class Opcode : std::uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kAttachment = 0x09,
  kAttachmentIndex = 0x0A,
  kStatistics = 0x0B,
  kMetadata = 0x0C,
  kMetadataIndex = 0x0D,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

// Every record: opcode (1 byte), content length (u64), content.
inline constexpr std::size_t kRecordPrefixBytes = 9;
// A Footer record, prefix included: summary_start, summary_offset_start (u64), summary_crc.
inline constexpr std::size_t kFooterRecordBytes = kRecordPrefixBytes + 8 + 8 + 4;
// A Message record's fixed fields: channel_id, sequence, log_time, publish_time.
inline constexpr std::size_t kMessageFieldBytes = 2 + 4 + 8 + 8;

// The largest chunk (uncompressed records) the reader accepts, so that hostile input cannot
// make it allocate without bound; the writer never writes a larger one.
inline constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{1} << 30;

// Chunk compression: zstd frames, or LZ4 *frames* (the spec's "lz4", not raw LZ4 blocks).
enum class Compression : std::uint8_t { kNone, kZstd, kLz4 };
// The Chunk record's compression string: "", "zstd" or "lz4".
std::string_view compression_name(Compression compression);

// The Statistics record's fields (times: the earliest and latest message log_time [ns], zero
// without messages). channel_message_counts: messages per channel id.
struct Statistics {
  std::uint64_t message_count = 0;
  std::uint16_t schema_count = 0;
  std::uint32_t channel_count = 0;
  std::uint32_t attachment_count = 0;
  std::uint32_t metadata_count = 0;
  std::uint32_t chunk_count = 0;
  std::uint64_t message_start_time = 0;
  std::uint64_t message_end_time = 0;
  std::map<std::uint16_t, std::uint64_t> channel_message_counts;
};

// A Schema record. id ≥ 1 (0 means "no schema" in a Channel); encoding e.g. "protobuf", whose
// data is a serialized google.protobuf.FileDescriptorSet and name the message's full name.
struct Schema {
  std::uint16_t id = 0;
  std::string name;
  std::string encoding;
  std::string data;
};

// A Channel record: a topic's stream of messages, all of one schema and encoding.
struct Channel {
  std::uint16_t id = 0;
  std::uint16_t schema_id = 0;  // 0: no schema
  std::string topic;
  std::string message_encoding;  // e.g. "protobuf", "json"
  std::map<std::string, std::string> metadata;
};

// A Message record as the reader hands it out: data views the reader's buffers and is valid
// only during the callback that receives it. Times [ns].
struct Message {
  std::uint16_t channel_id = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
  std::string_view data;
};

}  // namespace tether::mcap
