#include "tether/mcap/writer.h"

#include <fcntl.h>
#include <lz4frame.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "bytes.h"

namespace tether::mcap {

using detail::begin_record;
using detail::end_record;
using detail::put_string;
using detail::put_string_map;
using detail::put_u16;
using detail::put_u32;
using detail::put_u64;
using detail::put_u8;

namespace {

// zstd's fastest regular level: a recorder thread compresses a 1 MiB chunk in about a
// millisecond, and telemetry's repetitive fields compress well even so.
constexpr int kZstdLevel = 1;

[[noreturn]] void fail_errno(const std::filesystem::path& path, const char* what) {
  const int error = errno;
  throw std::runtime_error(path.string() + ": " + what + ": " +
                           std::error_code(error, std::generic_category()).message());
}

void put_schema(std::string& out, const Schema& s) {
  const std::size_t at = begin_record(out, Opcode::kSchema);
  put_u16(out, s.id);
  put_string(out, s.name);
  put_string(out, s.encoding);
  put_string(out, s.data);
  end_record(out, at);
}

void put_channel(std::string& out, const Channel& c) {
  const std::size_t at = begin_record(out, Opcode::kChannel);
  put_u16(out, c.id);
  put_u16(out, c.schema_id);
  put_string(out, c.topic);
  put_string(out, c.message_encoding);
  put_string_map(out, c.metadata);
  end_record(out, at);
}

void put_statistics(std::string& out, const Statistics& s) {
  const std::size_t at = begin_record(out, Opcode::kStatistics);
  put_u64(out, s.message_count);
  put_u16(out, s.schema_count);
  put_u32(out, s.channel_count);
  put_u32(out, s.attachment_count);
  put_u32(out, s.metadata_count);
  put_u32(out, s.chunk_count);
  put_u64(out, s.message_start_time);
  put_u64(out, s.message_end_time);
  put_u32(out, static_cast<std::uint32_t>(s.channel_message_counts.size() * (2 + 8)));
  for (const auto& [id, count] : s.channel_message_counts) {
    put_u16(out, id);
    put_u64(out, count);
  }
  end_record(out, at);
}

}  // namespace

struct Writer::Compressors {
  ZSTD_CCtx* zstd = nullptr;
  LZ4F_cctx* lz4 = nullptr;

  Compressors() = default;
  Compressors(const Compressors&) = delete;
  Compressors& operator=(const Compressors&) = delete;
  ~Compressors() {
    ZSTD_freeCCtx(zstd);
    LZ4F_freeCompressionContext(lz4);
  }
};

Writer::Writer(const std::filesystem::path& path, WriterOptions options)
    : path_(path), options_(std::move(options)), compressors_(std::make_unique<Compressors>()) {
  // Every chunk must stay within what a reader accepts, whatever the options ask.
  options_.chunk_size = std::min<std::size_t>(options_.chunk_size, kMaxChunkBytes / 2);
  if (options_.compression == Compression::kZstd) {
    compressors_->zstd = ZSTD_createCCtx();
    if (compressors_->zstd == nullptr) throw std::runtime_error("ZSTD_createCCtx failed");
  } else if (options_.compression == Compression::kLz4) {
    if (LZ4F_isError(LZ4F_createCompressionContext(&compressors_->lz4, LZ4F_VERSION))) {
      throw std::runtime_error("LZ4F_createCompressionContext failed");
    }
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_errno(path_, "cannot create");
  try {
    out_.assign(kMagic.begin(), kMagic.end());
    const std::size_t at = begin_record(out_, Opcode::kHeader);
    put_string(out_, options_.profile);
    put_string(out_, options_.library);
    end_record(out_, at);
    append(out_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

Writer::~Writer() {
  try {
    close();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

void Writer::require_open() const {
  if (fd_ < 0) throw std::logic_error(path_.string() + ": the MCAP writer is closed");
}

void Writer::append(std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path_, "write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  data_crc_ = detail::crc32_update(data_crc_, bytes.data(), bytes.size());
  offset_ += bytes.size();
}

std::uint16_t Writer::add_schema(std::string_view name, std::string_view encoding,
                                 std::string_view data) {
  require_open();
  for (const Schema& s : schemas_) {
    if (s.name == name && s.encoding == encoding && s.data == data) return s.id;
  }
  if (schemas_.size() >= UINT16_MAX) throw std::invalid_argument("MCAP: more than 65535 schemas");
  Schema& s =
      schemas_.emplace_back(Schema{static_cast<std::uint16_t>(schemas_.size() + 1),
                                   std::string(name), std::string(encoding), std::string(data)});
  out_.clear();
  put_schema(out_, s);
  append(out_);
  statistics_.schema_count = static_cast<std::uint16_t>(schemas_.size());
  return s.id;
}

std::uint16_t Writer::add_channel(std::uint16_t schema_id, std::string_view topic,
                                  std::string_view message_encoding,
                                  const std::map<std::string, std::string>& metadata) {
  require_open();
  if (schema_id > schemas_.size()) {
    throw std::invalid_argument(path_.string() + ": channel " + std::string(topic) +
                                " on unknown schema id " + std::to_string(schema_id));
  }
  if (channels_.size() >= UINT16_MAX) {
    throw std::invalid_argument("MCAP: more than 65535 channels");
  }
  Channel& c =
      channels_.emplace_back(Channel{static_cast<std::uint16_t>(channels_.size() + 1), schema_id,
                                     std::string(topic), std::string(message_encoding), metadata});
  message_index_.emplace_back();
  out_.clear();
  put_channel(out_, c);
  append(out_);
  statistics_.channel_count = static_cast<std::uint32_t>(channels_.size());
  return c.id;
}

void Writer::write(std::uint16_t channel_id, std::uint64_t log_time_ns,
                   std::uint64_t publish_time_ns, std::string_view data, std::uint32_t sequence) {
  require_open();
  if (channel_id == 0 || channel_id > channels_.size()) {
    throw std::invalid_argument(path_.string() + ": message on unknown channel id " +
                                std::to_string(channel_id));
  }
  constexpr std::uint64_t kMaxData = kMaxChunkBytes - kRecordPrefixBytes - kMessageFieldBytes;
  if (data.size() > kMaxData) {
    throw std::invalid_argument(path_.string() + ": a message of " + std::to_string(data.size()) +
                                " bytes exceeds a chunk's 1 GiB");
  }
  const std::uint64_t record = kRecordPrefixBytes + kMessageFieldBytes + data.size();
  if (chunk_.size() + record > kMaxChunkBytes) flush_chunk();

  const std::uint64_t at = chunk_.size();
  put_u8(chunk_, static_cast<std::uint8_t>(Opcode::kMessage));
  put_u64(chunk_, kMessageFieldBytes + data.size());
  put_u16(chunk_, channel_id);
  put_u32(chunk_, sequence);
  put_u64(chunk_, log_time_ns);
  put_u64(chunk_, publish_time_ns);
  chunk_.append(data);

  auto& index = message_index_[channel_id - 1];
  if (index.empty()) chunk_channels_.push_back(channel_id);
  index.emplace_back(log_time_ns, at);
  if (at == 0) {
    chunk_start_time_ = chunk_end_time_ = log_time_ns;
  } else {
    chunk_start_time_ = std::min(chunk_start_time_, log_time_ns);
    chunk_end_time_ = std::max(chunk_end_time_, log_time_ns);
  }
  Statistics& s = statistics_;
  if (s.message_count == 0) {
    s.message_start_time = s.message_end_time = log_time_ns;
  } else {
    s.message_start_time = std::min(s.message_start_time, log_time_ns);
    s.message_end_time = std::max(s.message_end_time, log_time_ns);
  }
  ++s.message_count;
  ++s.channel_message_counts[channel_id];  // allocates only for a channel's first message

  if (chunk_.size() >= options_.chunk_size) flush_chunk();
}

void Writer::compress_chunk() {
  const std::size_t n = chunk_.size();
  if (options_.compression == Compression::kZstd) {
    compressed_.resize(ZSTD_compressBound(n));
    const std::size_t size = ZSTD_compressCCtx(compressors_->zstd, compressed_.data(),
                                               compressed_.size(), chunk_.data(), n, kZstdLevel);
    if (ZSTD_isError(size) != 0U) {
      throw std::runtime_error(path_.string() + ": zstd: " + ZSTD_getErrorName(size));
    }
    compressed_.resize(size);
  } else if (options_.compression == Compression::kLz4) {
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.contentSize = n;  // lets a reader size its buffer before decompressing
    prefs.autoFlush = 1;              // no copy through the context's block buffer
    // LZ4F_compressBound() covers an update with the most that can be buffered, and the end.
    compressed_.resize(LZ4F_HEADER_SIZE_MAX + LZ4F_compressBound(n, &prefs));
    char* const dst = compressed_.data();
    const std::size_t capacity = compressed_.size();
    const auto check = [&](std::size_t r) {
      if (LZ4F_isError(r) != 0U) {
        throw std::runtime_error(path_.string() + ": lz4: " + LZ4F_getErrorName(r));
      }
      return r;
    };
    std::size_t size = check(LZ4F_compressBegin(compressors_->lz4, dst, capacity, &prefs));
    size += check(LZ4F_compressUpdate(compressors_->lz4, dst + size, capacity - size, chunk_.data(),
                                      n, nullptr));
    size += check(LZ4F_compressEnd(compressors_->lz4, dst + size, capacity - size, nullptr));
    compressed_.resize(size);
  }
}

void Writer::flush_chunk() {
  require_open();
  if (chunk_.empty()) return;
  const std::uint32_t crc = detail::crc32_update(0, chunk_.data(), chunk_.size());
  compress_chunk();
  const std::string_view records =
      options_.compression == Compression::kNone ? std::string_view(chunk_) : compressed_;

  ChunkIndex index;
  index.message_start_time = chunk_start_time_;
  index.message_end_time = chunk_end_time_;
  index.chunk_start_offset = offset_;
  index.compressed_size = records.size();
  index.uncompressed_size = chunk_.size();

  out_.clear();
  std::size_t at = begin_record(out_, Opcode::kChunk);
  put_u64(out_, chunk_start_time_);
  put_u64(out_, chunk_end_time_);
  put_u64(out_, chunk_.size());
  put_u32(out_, crc);
  put_string(out_, compression_name(options_.compression));
  put_u64(out_, records.size());
  out_.append(records);
  end_record(out_, at);
  index.chunk_length = out_.size();

  // One Message Index per channel, in id order, its entries in log_time order.
  std::sort(chunk_channels_.begin(), chunk_channels_.end());
  for (const std::uint16_t id : chunk_channels_) {
    auto& entries = message_index_[id - 1];
    std::sort(entries.begin(), entries.end());
    index.message_index_offsets.emplace(id, offset_ + out_.size());
    at = begin_record(out_, Opcode::kMessageIndex);
    put_u16(out_, id);
    put_u32(out_, static_cast<std::uint32_t>(entries.size() * (8 + 8)));
    for (const auto& [time, offset] : entries) {
      put_u64(out_, time);
      put_u64(out_, offset);
    }
    end_record(out_, at);
    entries.clear();
  }
  index.message_index_length = out_.size() - index.chunk_length;
  chunk_.clear();
  chunk_channels_.clear();

  append(out_);
  chunk_indexes_.push_back(std::move(index));
  ++statistics_.chunk_count;
}

void Writer::sync() {
  flush_chunk();
  if (::fsync(fd_) != 0) fail_errno(path_, "fsync");
}

void Writer::add_metadata(std::string_view name, const std::map<std::string, std::string>& values) {
  require_open();
  out_.clear();
  const std::size_t at = begin_record(out_, Opcode::kMetadata);
  put_string(out_, name);
  put_string_map(out_, values);
  end_record(out_, at);
  metadata_indexes_.push_back(RecordIndex{offset_, out_.size(), 0, 0, std::string(name), {}});
  append(out_);
  ++statistics_.metadata_count;
}

void Writer::add_attachment(std::string_view name, std::string_view media_type,
                            std::uint64_t log_time_ns, std::string_view data) {
  require_open();
  out_.clear();
  const std::size_t at = begin_record(out_, Opcode::kAttachment);
  put_u64(out_, log_time_ns);
  put_u64(out_, 0);  // create_time: unknown
  put_string(out_, name);
  put_string(out_, media_type);
  put_u64(out_, data.size());
  out_.append(data);
  // The CRC covers every field before it.
  put_u32(out_, detail::crc32_update(0, out_.data() + at + 8, out_.size() - at - 8));
  end_record(out_, at);
  attachment_indexes_.push_back(RecordIndex{offset_, out_.size(), log_time_ns, data.size(),
                                            std::string(name), std::string(media_type)});
  append(out_);
  ++statistics_.attachment_count;
}

void Writer::write_summary() {
  const std::uint64_t summary_start = offset_;
  struct Group {
    Opcode opcode;
    std::uint64_t start;
    std::uint64_t length;
  };
  std::vector<Group> groups;
  out_.clear();
  const auto group = [&](Opcode opcode, const auto& put_records) {
    const std::size_t begin = out_.size();
    put_records();
    if (out_.size() > begin) groups.push_back({opcode, summary_start + begin, out_.size() - begin});
  };

  group(Opcode::kSchema, [&] {
    for (const Schema& s : schemas_) put_schema(out_, s);
  });
  group(Opcode::kChannel, [&] {
    for (const Channel& c : channels_) put_channel(out_, c);
  });
  group(Opcode::kStatistics, [&] { put_statistics(out_, statistics_); });
  group(Opcode::kMetadataIndex, [&] {
    for (const RecordIndex& m : metadata_indexes_) {
      const std::size_t at = begin_record(out_, Opcode::kMetadataIndex);
      put_u64(out_, m.offset);
      put_u64(out_, m.length);
      put_string(out_, m.name);
      end_record(out_, at);
    }
  });
  group(Opcode::kAttachmentIndex, [&] {
    for (const RecordIndex& a : attachment_indexes_) {
      const std::size_t at = begin_record(out_, Opcode::kAttachmentIndex);
      put_u64(out_, a.offset);
      put_u64(out_, a.length);
      put_u64(out_, a.log_time);
      put_u64(out_, 0);  // create_time
      put_u64(out_, a.data_size);
      put_string(out_, a.name);
      put_string(out_, a.media_type);
      end_record(out_, at);
    }
  });
  group(Opcode::kChunkIndex, [&] {
    for (const ChunkIndex& c : chunk_indexes_) {
      const std::size_t at = begin_record(out_, Opcode::kChunkIndex);
      put_u64(out_, c.message_start_time);
      put_u64(out_, c.message_end_time);
      put_u64(out_, c.chunk_start_offset);
      put_u64(out_, c.chunk_length);
      put_u32(out_, static_cast<std::uint32_t>(c.message_index_offsets.size() * (2 + 8)));
      for (const auto& [id, offset] : c.message_index_offsets) {
        put_u16(out_, id);
        put_u64(out_, offset);
      }
      put_u64(out_, c.message_index_length);
      put_string(out_, compression_name(options_.compression));
      put_u64(out_, c.compressed_size);
      put_u64(out_, c.uncompressed_size);
      end_record(out_, at);
    }
  });

  const std::uint64_t summary_offset_start = summary_start + out_.size();
  for (const Group& g : groups) {
    const std::size_t at = begin_record(out_, Opcode::kSummaryOffset);
    put_u8(out_, static_cast<std::uint8_t>(g.opcode));
    put_u64(out_, g.start);
    put_u64(out_, g.length);
    end_record(out_, at);
  }

  // The Footer's length is written up front: the summary's CRC covers it (from the summary's
  // first record through the footer's summary_offset_start).
  put_u8(out_, static_cast<std::uint8_t>(Opcode::kFooter));
  put_u64(out_, kFooterRecordBytes - kRecordPrefixBytes);
  put_u64(out_, summary_start);
  put_u64(out_, summary_offset_start);
  put_u32(out_, detail::crc32_update(0, out_.data(), out_.size()));
  out_.append(kMagic.begin(), kMagic.end());
  append(out_);
}

void Writer::close() {
  if (fd_ < 0) return;
  try {
    flush_chunk();
    out_.clear();
    const std::size_t at = begin_record(out_, Opcode::kDataEnd);
    put_u32(out_, data_crc_);  // every byte so far: magic, Header, the data section's records
    end_record(out_, at);
    append(out_);
    write_summary();
    if (::fsync(fd_) != 0) fail_errno(path_, "fsync");
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  const int result = ::close(fd_);
  fd_ = -1;
  if (result != 0) fail_errno(path_, "close");
}

}  // namespace tether::mcap
