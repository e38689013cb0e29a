#pragma once

// Writes an MCAP file (records.h has the layout) from one thread, e.g. a recorder thread fed
// at 1 kHz: write() appends the message to an in-memory chunk and allocates nothing beyond
// the amortised growth of its buffers; the chunk is compressed and written when it holds
// chunk_size bytes (or on flush_chunk/sync/close).
//
// Crash safety: everything but the open chunk is in the file once the call that made it
// returns (Header at construction; Schema, Channel, Metadata and Attachment records when
// added), and sync() closes the chunk and fsyncs. A file whose writer died is a readable
// prefix: the Reader recovers every complete chunk (reader.h). close() writes the summary
// and the footer that make the file indexed.
//
// Errors: a failed write or fsync throws std::runtime_error naming the file and the system's
// reason; a call with an unknown id throws std::invalid_argument; any call but close(),
// bytes_written() and statistics() after close() throws std::logic_error.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tether/mcap/records.h"

namespace tether::mcap {

struct WriterOptions {
  Compression compression = Compression::kZstd;
  // Uncompressed bytes of message records after which a chunk closes. Larger chunks compress
  // better; smaller ones lose less in a crash between syncs. At most kMaxChunkBytes / 2.
  std::size_t chunk_size = std::size_t{1} << 20;
  std::string profile;  // the Header's profile ("" is fine; "x-…" for custom ones)
  std::string library = "tether";
};

class Writer {
 public:
  // Creates or truncates `path` and writes the magic and the Header; throws
  // std::runtime_error naming the path and strerror.
  explicit Writer(const std::filesystem::path& path, WriterOptions options = {});
  ~Writer();  // close() if still open; never throws (an error is lost: call close() to see it)
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // A Schema, written to the data section now and to the summary at close. Ids count from 1;
  // adding a schema identical to one added before (name, encoding and data) returns its id.
  std::uint16_t add_schema(std::string_view name, std::string_view encoding, std::string_view data);
  // A Channel on schema_id (0: no schema; otherwise one add_schema returned), written to the
  // data section now and to the summary at close. Ids count from 1.
  std::uint16_t add_channel(std::uint16_t schema_id, std::string_view topic,
                            std::string_view message_encoding,
                            const std::map<std::string, std::string>& metadata = {});

  // Appends a Message record to the open chunk [ns]; the chunk is written once it holds
  // chunk_size bytes. Messages may come in any log_time order (the reader sorts).
  void write(std::uint16_t channel_id, std::uint64_t log_time_ns, std::uint64_t publish_time_ns,
             std::string_view data, std::uint32_t sequence = 0);

  // A Metadata record now (outside chunks), indexed in the summary.
  void add_metadata(std::string_view name, const std::map<std::string, std::string>& values);
  // An Attachment record now, with its CRC-32 (create_time 0: unknown), indexed in the summary.
  void add_attachment(std::string_view name, std::string_view media_type, std::uint64_t log_time_ns,
                      std::string_view data);

  // Closes the open chunk, if it holds anything: the Chunk record and its Message Index
  // records go to the file (the kernel's page cache) now.
  void flush_chunk();
  // flush_chunk(), then fsync: what is on disk is a readable prefix should the machine crash.
  void sync();
  // flush_chunk(), Data End, the summary, Summary Offsets, Footer and magic; fsync; close the
  // file. Idempotent: later calls do nothing. The file is closed even if this throws.
  void close();

  std::uint64_t bytes_written() const { return offset_; }  // the file's size so far
  const Statistics& statistics() const { return statistics_; }

 private:
  struct ChunkIndex {
    std::uint64_t message_start_time = 0;
    std::uint64_t message_end_time = 0;
    std::uint64_t chunk_start_offset = 0;
    std::uint64_t chunk_length = 0;
    std::map<std::uint16_t, std::uint64_t> message_index_offsets;
    std::uint64_t message_index_length = 0;
    std::uint64_t compressed_size = 0;
    std::uint64_t uncompressed_size = 0;
  };
  struct RecordIndex {  // a Metadata or Attachment record's place, for its index record
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::uint64_t log_time = 0;
    std::uint64_t data_size = 0;
    std::string name;
    std::string media_type;
  };
  struct Compressors;  // zstd and LZ4 frame contexts, reused chunk to chunk

  void require_open() const;
  void append(std::string_view bytes);  // to the file, counted in the data section's CRC
  void compress_chunk();                // chunk_ → compressed_
  void write_summary();

  std::filesystem::path path_;
  WriterOptions options_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::uint32_t data_crc_ = 0;  // CRC-32 of everything appended so far

  std::vector<Schema> schemas_;    // id i + 1
  std::vector<Channel> channels_;  // id i + 1

  // The open chunk: its records, uncompressed; its messages' times; per channel id − 1 the
  // Message Index entries (log_time, offset in chunk_), and which channels have any.
  std::string chunk_;
  std::uint64_t chunk_start_time_ = 0;
  std::uint64_t chunk_end_time_ = 0;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> message_index_;
  std::vector<std::uint16_t> chunk_channels_;
  std::string compressed_;  // the closed chunk's records, compressed
  std::string out_;         // records being serialized before they are appended
  std::unique_ptr<Compressors> compressors_;

  std::vector<ChunkIndex> chunk_indexes_;
  std::vector<RecordIndex> metadata_indexes_;
  std::vector<RecordIndex> attachment_indexes_;
  Statistics statistics_;
};

}  // namespace tether::mcap
