#pragma once

// Reads an MCAP file (records.h), tether's or any other writer's: chunked or not, zstd, LZ4
// frame or uncompressed chunks, with or without a summary.
//
// Opening: a file that ends with a valid Footer and magic is read through its summary
// (Schemas, Channels, Statistics, Chunk, Metadata and Attachment Indexes; the summary's CRC
// is checked), and its data section is touched only where a query needs it. Without a
// summary (summary_start 0) the data section is scanned. A file that does not end with a
// footer (its writer died) is truncated(): recovered by scanning the records from the start,
// keeping every complete one, dropping an incomplete tail; its chunks are decompressed and
// checked while opening, and its statistics counted.
//
// Hostile input: every length is checked against the bytes that hold it before use, and a
// chunk's uncompressed size is bounded (kMaxChunkBytes, and by what actually decompresses),
// so no input makes the reader read out of bounds or allocate without bound. Every defect
// throws std::runtime_error naming the file, the byte offset (in the file, or in a chunk's
// uncompressed records) and what is wrong.
//
// The file is memory-mapped read-only; it must not shrink while the Reader is open. A
// Reader is movable, and its const members may be called from several threads at once.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tether/mcap/records.h"

namespace tether::mcap {

namespace detail {
struct Decoders;  // zstd and LZ4 frame decompression contexts
}  // namespace detail

class Reader {
 public:
  // Opens and validates `path` (see above).
  explicit Reader(const std::filesystem::path& path);
  // The same over a file's bytes in memory (a test's or a fuzzer's); `name` names it in errors.
  Reader(std::string bytes, std::string name);
  ~Reader();
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;

  bool truncated() const { return truncated_; }  // no valid footer: recovered by scanning
  const std::map<std::uint16_t, Schema>& schemas() const { return schemas_; }
  const std::map<std::uint16_t, Channel>& channels() const { return channels_; }
  // From the summary's Statistics record, or counted while scanning. A summary without one
  // yields the counts its indexes give (message_count and channel_message_counts stay 0).
  const Statistics& statistics() const { return statistics_; }
  // Metadata records in file order: name, key/value pairs.
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>>& metadata() const {
    return metadata_;
  }
  // Attachments in file order: name, data (each record's CRC checked when it has one).
  std::vector<std::pair<std::string, std::string>> attachments() const;

  // Calls f for every message with start_ns <= log_time < end_ns (end_ns UINT64_MAX: no upper
  // bound, a log_time of UINT64_MAX included), in log_time order (ties in file order),
  // decompressing the chunks that overlap the range (found through the Chunk Indexes, or the scan)
  // and checking each one's CRC. A query over everything (the default range) first checks the data
  // section's CRC, when the file has one. Chunks are merged as they are read, so memory holds only
  // those whose time ranges overlap. Messages outside chunks are found by scanning the data section
  // at open if the summary indexes no chunk (the spec cannot index them; a file that mixes both has
  // them ignored).
  void for_each_message(const std::function<void(const Channel&, const Message&)>& f,
                        std::uint64_t start_ns = 0, std::uint64_t end_ns = UINT64_MAX) const;

 private:
  struct Source;  // the file's bytes: mapped, or owned
  // What holds messages: a Chunk record, or a Message record outside chunks.
  struct Block {
    std::uint64_t start_time = 0;
    std::uint64_t end_time = 0;
    std::uint64_t offset = 0;  // of the record, from the file's start
    std::uint64_t length = 0;  // of the record, prefix included
    bool chunk = true;
  };
  struct Loaded;  // a block's messages, read for a query

  void open();
  void read_summary(std::uint64_t summary_start, std::uint64_t summary_offset_start,
                    std::uint32_t summary_crc);
  // How scan() reads the data section: a file cut short (an incomplete tail is dropped), a
  // complete one without summary (everything must be whole), or one whose summary indexes no
  // chunks (only where its messages are: Message records and Chunks, read later).
  enum class Scan : std::uint8_t { kRecover, kWhole, kMessagesOnly };
  void scan(std::uint64_t end, Scan mode);
  void add_schema(const Schema& schema, std::uint64_t offset);
  void add_channel(const Channel& channel, std::uint64_t offset);
  std::span<const std::uint8_t> unpack_chunk(const Block& block, std::string& buffer,
                                             detail::Decoders& decoders) const;
  void load(const Block& block, std::uint64_t start_ns, std::uint64_t end_ns, Loaded& into,
            detail::Decoders& decoders) const;
  void check_data_section_crc() const;

  std::string name_;
  std::unique_ptr<Source> source_;
  std::span<const std::uint8_t> file_;
  bool truncated_ = false;
  std::map<std::uint16_t, Schema> schemas_;
  std::map<std::uint16_t, Channel> channels_;
  Statistics statistics_;
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> metadata_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> attachments_;  // offset, length
  std::vector<Block> blocks_;
  // The Data End record, if found: its offset (the data section's end) and stored CRC.
  std::uint64_t data_end_ = 0;
  std::uint32_t data_crc_ = 0;
};

}  // namespace tether::mcap
