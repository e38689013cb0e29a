#include "tether/mcap/reader.h"

#include <fcntl.h>
#include <lz4frame.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <queue>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

#include "bytes.h"

namespace tether::mcap {

using detail::Cursor;

namespace detail {

// Created on first use and reused for every chunk of one query (or of the opening scan).
struct Decoders {
  ZSTD_DCtx* zstd = nullptr;
  LZ4F_dctx* lz4 = nullptr;

  Decoders() = default;
  Decoders(const Decoders&) = delete;
  Decoders& operator=(const Decoders&) = delete;
  ~Decoders() {
    ZSTD_freeDCtx(zstd);
    if (lz4 != nullptr) LZ4F_freeDecompressionContext(lz4);
  }
};

}  // namespace detail

struct Reader::Source {
  void* map = nullptr;  // the mapped file, or null
  std::size_t size = 0;
  std::string bytes;  // or the bytes in memory

  Source() = default;
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;
  ~Source() {
    if (map != nullptr) ::munmap(map, size);
  }
};

// A block's messages in the query's range, sorted by (log_time, offset in the block).
struct Reader::Loaded {
  struct Entry {
    std::uint64_t offset = 0;  // in the chunk's records: orders ties within the block
    const Channel* channel = nullptr;
    Message message;
  };
  std::string buffer;  // decompressed records (unused for uncompressed ones: they view the file)
  std::vector<Entry> entries;
  std::size_t next = 0;     // the entry to hand out next
  std::uint64_t order = 0;  // the block's file offset: orders ties between blocks
};

namespace {

constexpr std::size_t kMagicBytes = kMagic.size();
constexpr std::uint64_t kDataEndRecordBytes = kRecordPrefixBytes + 4;

std::string hex(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", v);
  return text;
}

std::string opcode_text(std::uint8_t op) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02x", op);
  return text;
}

bool is_magic(std::span<const std::uint8_t> bytes) {
  return bytes.size() == kMagicBytes && std::equal(bytes.begin(), bytes.end(), kMagic.begin());
}

std::uint64_t le_at(std::span<const std::uint8_t> bytes, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{bytes[at + i]} << (8 * i);
  return v;
}

// One record: its opcode and content, parsed from `c`; the content's cursor is offset-true.
struct Record {
  std::uint64_t offset = 0;  // of the opcode
  std::uint8_t opcode = 0;
  std::uint64_t length = 0;  // of the content
  std::span<const std::uint8_t> content;
};

// The record at c's position, or nothing if it does not fit in what remains (a file cut
// short: the caller decides whether that is an error).
std::optional<Record> next_record(Cursor& c) {
  Record r;
  r.offset = c.offset();
  if (c.remaining() < kRecordPrefixBytes) return std::nullopt;
  r.opcode = c.u8("opcode");
  r.length = c.u64("record length");
  if (r.length > c.remaining()) return std::nullopt;
  r.content = c.bytes(r.length, "record");
  return r;
}

// Like next_record(), for records that must be complete: an overlong one is an error.
Record whole_record(Cursor& c) {
  const std::uint64_t at = c.offset();
  const std::size_t left = c.remaining();
  std::optional<Record> r = next_record(c);
  if (!r) {
    if (left < kRecordPrefixBytes) c.fail_at(at, "a record's opcode and length are cut off");
    c.fail_at(at, "record length runs past the end (" + std::to_string(left - kRecordPrefixBytes) +
                      " bytes left)");
  }
  return *r;
}

Schema parse_schema(Cursor& c) {
  Schema s;
  s.id = c.u16("schema id");
  s.name = c.string("schema name");
  s.encoding = c.string("schema encoding");
  s.data = c.string("schema data");
  return s;
}

Channel parse_channel(Cursor& c) {
  Channel ch;
  ch.id = c.u16("channel id");
  ch.schema_id = c.u16("channel schema_id");
  ch.topic = c.string("channel topic");
  ch.message_encoding = c.string("channel message_encoding");
  ch.metadata = c.string_map("channel metadata");
  return ch;
}

Message parse_message(Cursor& c) {
  Message m;
  m.channel_id = c.u16("message channel_id");
  m.sequence = c.u32("message sequence");
  m.log_time = c.u64("message log_time");
  m.publish_time = c.u64("message publish_time");
  const auto data = c.rest();
  m.data = std::string_view(reinterpret_cast<const char*>(data.data()), data.size());
  return m;
}

struct ChunkHeader {
  std::uint64_t start_time = 0;
  std::uint64_t end_time = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint32_t uncompressed_crc = 0;
  std::string_view compression;
  std::span<const std::uint8_t> records;
};

ChunkHeader parse_chunk(Cursor& c) {
  ChunkHeader h;
  h.start_time = c.u64("chunk message_start_time");
  h.end_time = c.u64("chunk message_end_time");
  h.uncompressed_size = c.u64("chunk uncompressed_size");
  h.uncompressed_crc = c.u32("chunk uncompressed_crc");
  h.compression = c.string("chunk compression");
  h.records = c.bytes(c.u64("chunk records length"), "chunk records");
  return h;
}

std::pair<std::string, std::map<std::string, std::string>> parse_metadata(Cursor& c) {
  std::string name(c.string("metadata name"));
  return {std::move(name), c.string_map("metadata")};
}

// Decompresses `in` into `out`, growing it with what actually comes out, so that a forged
// size cannot make the reader allocate more than the data decompresses to; requires exactly
// `size` bytes. `step` consumes input and produces output as zstd's and LZ4's streaming
// decoders do: (input, output) → (consumed, produced, frame complete).
template <typename Step>
void decompress(std::span<const std::uint8_t> in, std::uint64_t size, std::string& out,
                const Cursor& where, std::uint64_t at, Step step) {
  std::size_t in_pos = 0;
  std::size_t out_pos = 0;
  out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(
      size, std::max<std::uint64_t>(std::uint64_t{in.size()} * 4, 1 << 16))));
  for (;;) {
    const auto [consumed, produced, done] =
        step(in.subspan(in_pos), std::span<char>(out.data() + out_pos, out.size() - out_pos));
    in_pos += consumed;
    out_pos += produced;
    if (done && in_pos == in.size()) break;
    if (out_pos == out.size() && out.size() < size) {
      out.resize(
          static_cast<std::size_t>(std::min<std::uint64_t>(size, 2 * std::uint64_t{out.size()})));
      continue;
    }
    if (consumed == 0 && produced == 0) {
      where.fail_at(
          at, out_pos == out.size()
                  ? "chunk decompresses to more than its uncompressed_size " + std::to_string(size)
                  : "chunk's compressed data ends inside a frame");
    }
  }
  if (out_pos != size) {
    where.fail_at(at, "chunk decompresses to " + std::to_string(out_pos) +
                          " bytes, its uncompressed_size says " + std::to_string(size));
  }
  out.resize(out_pos);
}

void decompress_zstd(std::span<const std::uint8_t> in, std::uint64_t size, std::string& out,
                     detail::Decoders& d, const Cursor& where, std::uint64_t at) {
  if (d.zstd == nullptr) d.zstd = ZSTD_createDCtx();
  if (d.zstd == nullptr) throw std::runtime_error("ZSTD_createDCtx failed");
  ZSTD_DCtx_reset(d.zstd, ZSTD_reset_session_only);
  decompress(in, size, out, where, at, [&](std::span<const std::uint8_t> src, std::span<char> dst) {
    ZSTD_inBuffer input{src.data(), src.size(), 0};
    ZSTD_outBuffer output{dst.data(), dst.size(), 0};
    const std::size_t r = ZSTD_decompressStream(d.zstd, &output, &input);
    if (ZSTD_isError(r) != 0U) {
      where.fail_at(at, std::string("chunk's zstd data is corrupt: ") + ZSTD_getErrorName(r));
    }
    return std::tuple(input.pos, output.pos, r == 0);
  });
}

void decompress_lz4(std::span<const std::uint8_t> in, std::uint64_t size, std::string& out,
                    detail::Decoders& d, const Cursor& where, std::uint64_t at) {
  if (d.lz4 == nullptr && LZ4F_isError(LZ4F_createDecompressionContext(&d.lz4, LZ4F_VERSION))) {
    throw std::runtime_error("LZ4F_createDecompressionContext failed");
  }
  LZ4F_resetDecompressionContext(d.lz4);
  decompress(in, size, out, where, at, [&](std::span<const std::uint8_t> src, std::span<char> dst) {
    std::size_t consumed = src.size();
    std::size_t produced = dst.size();
    const std::size_t r =
        LZ4F_decompress(d.lz4, dst.data(), &produced, src.data(), &consumed, nullptr);
    if (LZ4F_isError(r) != 0U) {
      LZ4F_resetDecompressionContext(d.lz4);
      where.fail_at(at, std::string("chunk's LZ4 frame is corrupt: ") + LZ4F_getErrorName(r));
    }
    return std::tuple(consumed, produced, r == 0);
  });
}

}  // namespace

Reader::Reader(const std::filesystem::path& path)
    : name_(path.string()), source_(std::make_unique<Source>()) {
  const auto fail = [&](const char* what) {
    const int error = errno;
    throw std::runtime_error(name_ + ": " + what + ": " +
                             std::error_code(error, std::generic_category()).message());
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(name_ + ": not a regular file");
  }
  source_->size = static_cast<std::size_t>(st.st_size);
  if (source_->size > 0) {
    void* map = ::mmap(nullptr, source_->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      ::close(fd);
      fail("cannot map");
    }
    source_->map = map;
  }
  ::close(fd);
  file_ = std::span(static_cast<const std::uint8_t*>(source_->map), source_->size);
  open();
}

Reader::Reader(std::string bytes, std::string name)
    : name_(std::move(name)), source_(std::make_unique<Source>()) {
  source_->bytes = std::move(bytes);
  file_ = std::span(reinterpret_cast<const std::uint8_t*>(source_->bytes.data()),
                    source_->bytes.size());
  open();
}

Reader::~Reader() = default;
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;

void Reader::open() {
  const std::string context = name_ + ": offset ";
  const Cursor file(file_, 0, context);
  if (file_.size() < kMagicBytes || !is_magic(file_.first(kMagicBytes))) {
    file.fail_at(0, "not an MCAP file: no leading magic");
  }
  // A complete file ends with a Footer record and the magic. Anything else is a file whose
  // writer stopped before the end.
  bool footer = false;
  std::uint64_t footer_at = 0;
  if (file_.size() >= 2 * kMagicBytes + kFooterRecordBytes) {
    footer_at = file_.size() - kMagicBytes - kFooterRecordBytes;
    footer = is_magic(file_.last(kMagicBytes)) &&
             file_[footer_at] == static_cast<std::uint8_t>(Opcode::kFooter) &&
             le_at(file_, footer_at + 1, 8) == kFooterRecordBytes - kRecordPrefixBytes;
  }
  if (!footer) {
    truncated_ = true;
    scan(file_.size(), Scan::kRecover);
    return;
  }
  const std::uint64_t summary_start = le_at(file_, footer_at + 9, 8);
  const std::uint64_t summary_offset_start = le_at(file_, footer_at + 17, 8);
  const auto summary_crc = static_cast<std::uint32_t>(le_at(file_, footer_at + 25, 4));
  if (summary_start == 0) {
    scan(footer_at, Scan::kWhole);
    return;
  }
  // The Header, which the summary does not repeat.
  Cursor header(file_.subspan(kMagicBytes, footer_at - kMagicBytes), kMagicBytes, context);
  const Record r = whole_record(header);
  if (r.opcode != static_cast<std::uint8_t>(Opcode::kHeader)) {
    file.fail_at(kMagicBytes,
                 "the first record is not a Header (opcode " + opcode_text(r.opcode) + ")");
  }
  read_summary(summary_start, summary_offset_start, summary_crc);
}

void Reader::add_schema(const Schema& schema, std::uint64_t offset) {
  if (schema.id == 0) return;  // invalid by the spec, to be ignored
  const auto [it, added] = schemas_.emplace(schema.id, schema);
  const Schema& s = it->second;
  if (!added && (s.name != schema.name || s.encoding != schema.encoding || s.data != schema.data)) {
    throw std::runtime_error(name_ + ": offset " + std::to_string(offset) + ": schema " +
                             std::to_string(schema.id) + " redefined differently");
  }
}

void Reader::add_channel(const Channel& channel, std::uint64_t offset) {
  const auto [it, added] = channels_.emplace(channel.id, channel);
  const Channel& c = it->second;
  if (!added &&
      (c.schema_id != channel.schema_id || c.topic != channel.topic ||
       c.message_encoding != channel.message_encoding || c.metadata != channel.metadata)) {
    throw std::runtime_error(name_ + ": offset " + std::to_string(offset) + ": channel " +
                             std::to_string(channel.id) + " redefined differently");
  }
}

void Reader::scan(std::uint64_t end, Scan mode) {
  const bool tolerate_tail = mode == Scan::kRecover;
  const bool everything = mode != Scan::kMessagesOnly;
  const std::string context = name_ + ": offset ";
  Cursor c(file_.subspan(kMagicBytes, end - kMagicBytes), kMagicBytes, context);
  detail::Decoders decoders;
  std::string buffer;
  Statistics& stats = statistics_;
  const auto count = [&](const Message& m) {
    if (stats.message_count == 0) {
      stats.message_start_time = stats.message_end_time = m.log_time;
    } else {
      stats.message_start_time = std::min(stats.message_start_time, m.log_time);
      stats.message_end_time = std::max(stats.message_end_time, m.log_time);
    }
    ++stats.message_count;
    ++stats.channel_message_counts[m.channel_id];
  };
  const auto require_channel = [&](const Cursor& at, std::uint64_t offset, const Message& m) {
    if (!channels_.contains(m.channel_id)) {
      at.fail_at(offset, "message on channel " + std::to_string(m.channel_id) +
                             ", which no Channel record before it defines");
    }
  };

  bool first = true;
  bool done = false;  // a Data End (or a Footer) ends the data section
  while (!done && c.remaining() > 0) {
    std::optional<Record> next;
    if (tolerate_tail) {
      next = next_record(c);
      if (!next) break;  // the incomplete tail a crash leaves
    } else {
      next = whole_record(c);
    }
    const Record& r = *next;
    Cursor body(r.content, r.offset + kRecordPrefixBytes, context);
    if (first && r.opcode != static_cast<std::uint8_t>(Opcode::kHeader)) {
      c.fail_at(r.offset,
                "the first record is not a Header (opcode " + opcode_text(r.opcode) + ")");
    }
    first = false;
    if (!everything && r.opcode != static_cast<std::uint8_t>(Opcode::kMessage) &&
        r.opcode != static_cast<std::uint8_t>(Opcode::kChunk) &&
        r.opcode != static_cast<std::uint8_t>(Opcode::kDataEnd)) {
      continue;
    }
    switch (static_cast<Opcode>(r.opcode)) {
      case Opcode::kHeader:
        (void)body.string("header profile");
        (void)body.string("header library");
        break;
      case Opcode::kSchema:
        add_schema(parse_schema(body), r.offset);
        break;
      case Opcode::kChannel: {
        const Channel channel = parse_channel(body);
        if (channel.schema_id != 0 && !schemas_.contains(channel.schema_id)) {
          c.fail_at(r.offset, "channel " + std::to_string(channel.id) + " refers to schema " +
                                  std::to_string(channel.schema_id) +
                                  ", which no Schema record before it defines");
        }
        add_channel(channel, r.offset);
        break;
      }
      case Opcode::kMessage: {
        const Message m = parse_message(body);
        require_channel(c, r.offset, m);
        if (everything) count(m);
        blocks_.push_back(
            Block{m.log_time, m.log_time, r.offset, kRecordPrefixBytes + r.length, false});
        break;
      }
      case Opcode::kChunk: {
        const ChunkHeader h = parse_chunk(body);
        const Block block{h.start_time, h.end_time, r.offset, kRecordPrefixBytes + r.length, true};
        if (!everything) {  // read (and checked) when a query needs it
          blocks_.push_back(block);
          break;
        }
        const std::string chunk_context =
            name_ + ": chunk at offset " + std::to_string(r.offset) + ", uncompressed byte ";
        Cursor records(unpack_chunk(block, buffer, decoders), 0, chunk_context);
        while (records.remaining() > 0) {
          const Record inner = whole_record(records);
          Cursor fields(inner.content, inner.offset + kRecordPrefixBytes, chunk_context);
          if (inner.opcode == static_cast<std::uint8_t>(Opcode::kSchema)) {
            add_schema(parse_schema(fields), r.offset);
          } else if (inner.opcode == static_cast<std::uint8_t>(Opcode::kChannel)) {
            const Channel channel = parse_channel(fields);
            if (channel.schema_id != 0 && !schemas_.contains(channel.schema_id)) {
              records.fail_at(inner.offset, "channel " + std::to_string(channel.id) +
                                                " refers to undefined schema " +
                                                std::to_string(channel.schema_id));
            }
            add_channel(channel, r.offset);
          } else if (inner.opcode == static_cast<std::uint8_t>(Opcode::kMessage)) {
            const Message m = parse_message(fields);
            require_channel(records, inner.offset, m);
            if (m.log_time < h.start_time || m.log_time > h.end_time) {
              records.fail_at(inner.offset, "message log_time " + std::to_string(m.log_time) +
                                                " outside its chunk's [" +
                                                std::to_string(h.start_time) + ", " +
                                                std::to_string(h.end_time) + "]");
            }
            count(m);
          }
        }
        blocks_.push_back(block);
        ++stats.chunk_count;
        break;
      }
      case Opcode::kAttachment:
        attachments_.emplace_back(r.offset, kRecordPrefixBytes + r.length);
        ++stats.attachment_count;
        break;
      case Opcode::kMetadata:
        metadata_.push_back(parse_metadata(body));
        ++stats.metadata_count;
        break;
      case Opcode::kDataEnd:
        data_end_ = r.offset;
        data_crc_ = body.u32("data_section_crc");
        done = true;
        break;
      case Opcode::kFooter:  // a footer cut off before its magic: nothing follows
        done = true;
        break;
      default:  // Message Indexes (chunks are read whole), summary records, extensions
        break;
    }
  }
  if (!everything) return;
  if (first && !tolerate_tail) c.fail_at(kMagicBytes, "no Header record");
  stats.schema_count = static_cast<std::uint16_t>(schemas_.size());
  stats.channel_count = static_cast<std::uint32_t>(channels_.size());
}

void Reader::read_summary(std::uint64_t summary_start, std::uint64_t summary_offset_start,
                          std::uint32_t summary_crc) {
  const std::string context = name_ + ": offset ";
  const std::uint64_t footer_at = file_.size() - kMagicBytes - kFooterRecordBytes;
  const Cursor file(file_, 0, context);
  if (summary_start < kMagicBytes || summary_start > footer_at) {
    file.fail_at(footer_at, "footer's summary_start " + std::to_string(summary_start) +
                                " is outside the file's records");
  }
  if (summary_offset_start != 0 &&
      (summary_offset_start < summary_start || summary_offset_start > footer_at)) {
    file.fail_at(footer_at, "footer's summary_offset_start " +
                                std::to_string(summary_offset_start) + " is outside the summary");
  }
  if (summary_crc != 0) {
    // From the summary's first record through the footer's summary_offset_start field.
    const std::uint64_t covered = footer_at + kRecordPrefixBytes + 8 + 8 - summary_start;
    const std::uint32_t crc = detail::crc32_of(file_.subspan(summary_start, covered));
    if (crc != summary_crc) {
      file.fail_at(footer_at, "summary CRC mismatch: the footer says " + hex(summary_crc) +
                                  ", the summary's bytes give " + hex(crc));
    }
  }

  // Where a data section record an index names must lie: whole, between Header and summary.
  const auto in_data = [&](std::uint64_t offset, std::uint64_t length, std::uint64_t at,
                           const char* what) {
    if (offset < kMagicBytes || offset > summary_start || length < kRecordPrefixBytes ||
        length > summary_start - offset) {
      file.fail_at(at, std::string(what) + " [" + std::to_string(offset) + ", +" +
                           std::to_string(length) + ") is outside the data section");
    }
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> metadata_records;
  bool has_statistics = false;
  const std::uint64_t end = summary_offset_start != 0 ? summary_offset_start : footer_at;
  Cursor c(file_.subspan(summary_start, end - summary_start), summary_start, context);
  while (c.remaining() > 0) {
    const Record r = whole_record(c);
    Cursor body(r.content, r.offset + kRecordPrefixBytes, context);
    switch (static_cast<Opcode>(r.opcode)) {
      case Opcode::kSchema:
        add_schema(parse_schema(body), r.offset);
        break;
      case Opcode::kChannel:
        add_channel(parse_channel(body), r.offset);
        break;
      case Opcode::kChunkIndex: {
        Block b;
        b.start_time = body.u64("chunk index message_start_time");
        b.end_time = body.u64("chunk index message_end_time");
        b.offset = body.u64("chunk index chunk_start_offset");
        b.length = body.u64("chunk index chunk_length");
        (void)body.bytes(body.u32("chunk index message_index_offsets"),
                         "chunk index message_index_offsets");
        (void)body.u64("chunk index message_index_length");
        (void)body.string("chunk index compression");
        (void)body.u64("chunk index compressed_size");
        (void)body.u64("chunk index uncompressed_size");
        in_data(b.offset, b.length, r.offset, "chunk");
        blocks_.push_back(b);
        break;
      }
      case Opcode::kAttachmentIndex: {
        const std::uint64_t offset = body.u64("attachment index offset");
        const std::uint64_t length = body.u64("attachment index length");
        in_data(offset, length, r.offset, "attachment");
        attachments_.emplace_back(offset, length);
        break;
      }
      case Opcode::kMetadataIndex: {
        const std::uint64_t offset = body.u64("metadata index offset");
        const std::uint64_t length = body.u64("metadata index length");
        in_data(offset, length, r.offset, "metadata");
        metadata_records.emplace_back(offset, length);
        break;
      }
      case Opcode::kStatistics: {
        Statistics& s = statistics_;
        s.message_count = body.u64("statistics message_count");
        s.schema_count = body.u16("statistics schema_count");
        s.channel_count = body.u32("statistics channel_count");
        s.attachment_count = body.u32("statistics attachment_count");
        s.metadata_count = body.u32("statistics metadata_count");
        s.chunk_count = body.u32("statistics chunk_count");
        s.message_start_time = body.u64("statistics message_start_time");
        s.message_end_time = body.u64("statistics message_end_time");
        const std::uint32_t n = body.u32("statistics channel_message_counts");
        const std::uint64_t at = body.offset();
        Cursor counts(body.bytes(n, "statistics channel_message_counts"), at, context);
        s.channel_message_counts.clear();
        while (counts.remaining() > 0) {
          const std::uint16_t id = counts.u16("channel id");
          s.channel_message_counts[id] = counts.u64("message count");
        }
        has_statistics = true;
        break;
      }
      default:  // Summary Offsets are not needed: the summary is read whole
        break;
    }
  }
  for (const auto& [id, channel] : channels_) {
    if (channel.schema_id != 0 && !schemas_.contains(channel.schema_id)) {
      file.fail_at(summary_start, "channel " + std::to_string(id) + " refers to schema " +
                                      std::to_string(channel.schema_id) +
                                      ", which the summary does not define");
    }
  }

  // Without Chunk Indexes, messages (if any) are where only a scan finds them.
  if (blocks_.empty()) scan(summary_start, Scan::kMessagesOnly);

  // The records the indexes point at, in file order.
  std::sort(blocks_.begin(), blocks_.end(),
            [](const Block& a, const Block& b) { return a.offset < b.offset; });
  // Chunks do not overlap: a forged index cannot make a query decompress one chunk many times.
  for (std::size_t i = 1; i < blocks_.size(); ++i) {
    if (blocks_[i].offset < blocks_[i - 1].offset + blocks_[i - 1].length) {
      file.fail_at(blocks_[i].offset, "Chunk Indexes point at overlapping chunks");
    }
  }
  std::sort(attachments_.begin(), attachments_.end());
  std::sort(metadata_records.begin(), metadata_records.end());
  for (const auto& [offset, length] : metadata_records) {
    Cursor m(file_.subspan(offset, length), offset, context);
    const Record r = whole_record(m);
    if (r.opcode != static_cast<std::uint8_t>(Opcode::kMetadata) || m.remaining() != 0) {
      file.fail_at(offset, "a Metadata Index points at no Metadata record of its length");
    }
    Cursor body(r.content, offset + kRecordPrefixBytes, context);
    metadata_.push_back(parse_metadata(body));
  }

  // The data section's end: the Data End record just before the summary, if it is there.
  if (summary_start >= kMagicBytes + kDataEndRecordBytes) {
    const std::uint64_t at = summary_start - kDataEndRecordBytes;
    if (file_[at] == static_cast<std::uint8_t>(Opcode::kDataEnd) && le_at(file_, at + 1, 8) == 4) {
      data_end_ = at;
      data_crc_ = static_cast<std::uint32_t>(le_at(file_, at + kRecordPrefixBytes, 4));
    }
  }

  if (!has_statistics) {  // what the indexes tell
    Statistics& s = statistics_;
    s.schema_count = static_cast<std::uint16_t>(schemas_.size());
    s.channel_count = static_cast<std::uint32_t>(channels_.size());
    s.attachment_count = static_cast<std::uint32_t>(attachments_.size());
    s.metadata_count = static_cast<std::uint32_t>(metadata_.size());
    s.chunk_count = static_cast<std::uint32_t>(blocks_.size());
    for (const Block& b : blocks_) {
      if (b.start_time == 0 && b.end_time == 0) continue;  // an empty chunk
      s.message_start_time =
          s.message_start_time == 0 ? b.start_time : std::min(s.message_start_time, b.start_time);
      s.message_end_time = std::max(s.message_end_time, b.end_time);
    }
  }
}

std::span<const std::uint8_t> Reader::unpack_chunk(const Block& block, std::string& buffer,
                                                   detail::Decoders& decoders) const {
  const std::string context = name_ + ": offset ";
  Cursor c(file_.subspan(block.offset, block.length), block.offset, context);
  const Record r = whole_record(c);
  if (r.opcode != static_cast<std::uint8_t>(Opcode::kChunk) || c.remaining() != 0) {
    c.fail_at(block.offset, "a Chunk Index points at no Chunk record of its length (opcode " +
                                opcode_text(r.opcode) + ")");
  }
  Cursor body(r.content, block.offset + kRecordPrefixBytes, context);
  const ChunkHeader h = parse_chunk(body);
  if (h.start_time != block.start_time || h.end_time != block.end_time) {
    c.fail_at(block.offset, "the chunk's message times differ from its Chunk Index's");
  }
  if (h.uncompressed_size > kMaxChunkBytes) {
    c.fail_at(block.offset, "chunk uncompressed_size " + std::to_string(h.uncompressed_size) +
                                " exceeds the 1 GiB limit");
  }
  std::span<const std::uint8_t> records;
  if (h.compression.empty()) {
    if (h.records.size() != h.uncompressed_size) {
      c.fail_at(block.offset, "uncompressed chunk holds " + std::to_string(h.records.size()) +
                                  " bytes, its uncompressed_size says " +
                                  std::to_string(h.uncompressed_size));
    }
    records = h.records;
  } else if (h.compression == "zstd") {
    decompress_zstd(h.records, h.uncompressed_size, buffer, decoders, c, block.offset);
    records = std::span(reinterpret_cast<const std::uint8_t*>(buffer.data()), buffer.size());
  } else if (h.compression == "lz4") {
    decompress_lz4(h.records, h.uncompressed_size, buffer, decoders, c, block.offset);
    records = std::span(reinterpret_cast<const std::uint8_t*>(buffer.data()), buffer.size());
  } else {
    c.fail_at(block.offset, "unsupported chunk compression \"" + std::string(h.compression) + "\"");
  }
  if (h.uncompressed_crc != 0) {
    const std::uint32_t crc = detail::crc32_of(records);
    if (crc != h.uncompressed_crc) {
      c.fail_at(block.offset, "chunk CRC mismatch: uncompressed_crc says " +
                                  hex(h.uncompressed_crc) + ", the records give " + hex(crc));
    }
  }
  return records;
}

void Reader::load(const Block& block, std::uint64_t start_ns, std::uint64_t end_ns, Loaded& into,
                  detail::Decoders& decoders) const {
  into.entries.clear();
  into.next = 0;
  into.order = block.offset;
  const auto add = [&](const Cursor& where, std::uint64_t offset, const Message& m) {
    if (m.log_time < block.start_time || m.log_time > block.end_time) {
      where.fail_at(offset, "message log_time " + std::to_string(m.log_time) +
                                " outside its chunk's [" + std::to_string(block.start_time) + ", " +
                                std::to_string(block.end_time) + "]");
    }
    if (m.log_time < start_ns || (m.log_time >= end_ns && end_ns != UINT64_MAX)) return;
    const auto channel = channels_.find(m.channel_id);
    if (channel == channels_.end()) {
      where.fail_at(offset, "message on undefined channel " + std::to_string(m.channel_id));
    }
    into.entries.push_back({offset, &channel->second, m});
  };

  const std::string context = name_ + ": offset ";
  if (!block.chunk) {
    Cursor c(file_.subspan(block.offset, block.length), block.offset, context);
    const Record r = whole_record(c);
    Cursor body(r.content, block.offset + kRecordPrefixBytes, context);
    add(c, block.offset, parse_message(body));
    return;
  }
  const std::string chunk_context =
      name_ + ": chunk at offset " + std::to_string(block.offset) + ", uncompressed byte ";
  Cursor records(unpack_chunk(block, into.buffer, decoders), 0, chunk_context);
  while (records.remaining() > 0) {
    const Record r = whole_record(records);
    if (r.opcode == static_cast<std::uint8_t>(Opcode::kMessage)) {
      Cursor body(r.content, r.offset + kRecordPrefixBytes, chunk_context);
      add(records, r.offset, parse_message(body));
    }
  }
  std::sort(into.entries.begin(), into.entries.end(), [](const auto& a, const auto& b) {
    return std::tie(a.message.log_time, a.offset) < std::tie(b.message.log_time, b.offset);
  });
}

void Reader::check_data_section_crc() const {
  if (data_end_ == 0 || data_crc_ == 0) return;
  const std::uint32_t crc = detail::crc32_of(file_.first(data_end_));
  if (crc != data_crc_) {
    throw std::runtime_error(name_ + ": offset " + std::to_string(data_end_) +
                             ": data section CRC mismatch: Data End says " + hex(data_crc_) +
                             ", the data section's bytes give " + hex(crc));
  }
}

void Reader::for_each_message(const std::function<void(const Channel&, const Message&)>& f,
                              std::uint64_t start_ns, std::uint64_t end_ns) const {
  const bool unbounded = end_ns == UINT64_MAX;  // to the end, UINT64_MAX itself included
  if (start_ns >= end_ns && !unbounded) return;
  if (start_ns == 0 && end_ns == UINT64_MAX) check_data_section_crc();

  std::vector<const Block*> blocks;
  for (const Block& b : blocks_) {
    if (b.end_time >= start_ns && (b.start_time < end_ns || unbounded)) blocks.push_back(&b);
  }
  std::sort(blocks.begin(), blocks.end(), [](const Block* a, const Block* b) {
    return std::tie(a->start_time, a->offset) < std::tie(b->start_time, b->offset);
  });

  // A k-way merge of the blocks' sorted messages: a block is read once the earliest message
  // pending is no earlier than its start, so only blocks whose times overlap are in memory.
  const auto head = [](const Loaded* l) {
    const Loaded::Entry& e = l->entries[l->next];
    return std::tuple(e.message.log_time, l->order, e.offset);
  };
  const auto later = [&](const Loaded* a, const Loaded* b) { return head(a) > head(b); };
  std::priority_queue<Loaded*, std::vector<Loaded*>, decltype(later)> pending(later);
  std::vector<std::unique_ptr<Loaded>> pool;  // reused, with their buffers
  std::vector<Loaded*> idle;
  detail::Decoders decoders;
  std::size_t next = 0;
  for (;;) {
    while (next < blocks.size() &&
           (pending.empty() || blocks[next]->start_time <= std::get<0>(head(pending.top())))) {
      Loaded* l = nullptr;
      if (idle.empty()) {
        l = pool.emplace_back(std::make_unique<Loaded>()).get();
      } else {
        l = idle.back();
        idle.pop_back();
      }
      load(*blocks[next++], start_ns, end_ns, *l, decoders);
      if (l->entries.empty()) {
        idle.push_back(l);
      } else {
        pending.push(l);
      }
    }
    if (pending.empty()) break;
    Loaded* l = pending.top();
    pending.pop();
    const Loaded::Entry& e = l->entries[l->next++];
    f(*e.channel, e.message);
    if (l->next < l->entries.size()) {
      pending.push(l);
    } else {
      idle.push_back(l);
    }
  }
}

std::vector<std::pair<std::string, std::string>> Reader::attachments() const {
  const std::string context = name_ + ": offset ";
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [offset, length] : attachments_) {
    Cursor c(file_.subspan(offset, length), offset, context);
    const Record r = whole_record(c);
    if (r.opcode != static_cast<std::uint8_t>(Opcode::kAttachment) || c.remaining() != 0) {
      c.fail_at(offset, "an Attachment Index points at no Attachment record of its length");
    }
    Cursor body(r.content, offset + kRecordPrefixBytes, context);
    (void)body.u64("attachment log_time");
    (void)body.u64("attachment create_time");
    std::string name(body.string("attachment name"));
    (void)body.string("attachment media_type");
    const auto data = body.bytes(body.u64("attachment data length"), "attachment data");
    const std::size_t covered = body.position();
    const std::uint32_t stored = body.u32("attachment crc");
    if (stored != 0) {
      const std::uint32_t crc = detail::crc32_of(r.content.first(covered));
      if (crc != stored) {
        c.fail_at(offset, "attachment \"" + name + "\" CRC mismatch: the record says " +
                              hex(stored) + ", its bytes give " + hex(crc));
      }
    }
    out.emplace_back(std::move(name),
                     std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  }
  return out;
}

}  // namespace tether::mcap
