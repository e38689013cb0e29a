// MCAP recordings (tether/mcap/writer.h, reader.h): round trips with each compression, many
// channels, sorting and range queries through the chunk index, statistics, metadata and
// attachments, the byte layout the spec prescribes, recovery of a file whose writer died at
// any byte, rejection of corrupt files naming what is wrong, and a writer that allocates
// nothing per message once its buffers have grown.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tether/mcap/reader.h"
#include "tether/mcap/writer.h"

namespace tether::mcap {
namespace {

namespace fs = std::filesystem;

// prefix followed by n in decimal (GCC 12 warns falsely about "literal" + std::to_string()).
std::string numbered(std::string prefix, std::uint64_t n) {
  prefix += std::to_string(n);
  return prefix;
}

// A file in the temporary directory, removed afterwards.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_(fs::temp_directory_path() /
              (numbered("tether_mcap_", static_cast<std::uint64_t>(::getpid())) + "_" + name +
               ".mcap")) {}
  ~TempFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint64_t le(const std::string& bytes, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v |= std::uint64_t{static_cast<std::uint8_t>(bytes[at + i])} << (8 * i);
  }
  return v;
}

// What was written, to compare with what is read.
struct Written {
  std::uint16_t channel = 0;
  std::uint32_t sequence = 0;
  std::uint64_t log_time = 0;
  std::uint64_t publish_time = 0;
  std::string data;
  bool operator==(const Written&) const = default;
};

std::vector<Written> read_all(const Reader& reader, std::uint64_t start = 0,
                              std::uint64_t end = UINT64_MAX) {
  std::vector<Written> out;
  reader.for_each_message(
      [&](const Channel& c, const Message& m) {
        EXPECT_EQ(c.id, m.channel_id);
        out.push_back({m.channel_id, m.sequence, m.log_time, m.publish_time, std::string(m.data)});
      },
      start, end);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

std::string payload(std::mt19937& rng, std::size_t i) {
  std::string s = numbered("payload-", i) + "-";
  s.append(rng() % 200, static_cast<char>('a' + rng() % 26));
  return s;
}

class McapRoundTrip : public ::testing::TestWithParam<Compression> {};

TEST_P(McapRoundTrip, ReturnsEveryMessageSchemaAndChannelWritten) {
  TempFile file("round_trip_" + std::string(compression_name(GetParam())));
  std::mt19937 rng(7);
  std::vector<Written> written;
  {
    Writer w(file.path(), {GetParam(), 4096, "x-tether-test", "tether-test"});
    const std::uint16_t a = w.add_schema("tether.v1.A", "protobuf", std::string("\x00\x01\xff", 3));
    const std::uint16_t b = w.add_schema("b.json", "jsonschema", "{}");
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 2);
    const std::uint16_t ca = w.add_channel(a, "/a", "protobuf", {{"k", "v"}, {"x", ""}});
    const std::uint16_t cb = w.add_channel(b, "/b", "json");
    const std::uint16_t cn = w.add_channel(0, "/raw", "x-raw");
    for (std::uint32_t i = 0; i < 600; ++i) {
      const std::uint16_t ch = i % 3 == 0 ? ca : i % 3 == 1 ? cb : cn;
      written.push_back(
          {ch, i, 1000 + std::uint64_t{i} * 10, 999 + std::uint64_t{i} * 10, payload(rng, i)});
      const Written& m = written.back();
      w.write(m.channel, m.log_time, m.publish_time, m.data, m.sequence);
    }
    written.push_back({cb, 600, 7000, 7000, ""});  // an empty message is a message
    w.write(cb, 7000, 7000, "", 600);
    w.close();
    EXPECT_GT(w.statistics().chunk_count, 10U);
  }

  const Reader r(file.path());
  EXPECT_FALSE(r.truncated());
  ASSERT_EQ(r.schemas().size(), 2U);
  EXPECT_EQ(r.schemas().at(1).name, "tether.v1.A");
  EXPECT_EQ(r.schemas().at(1).encoding, "protobuf");
  EXPECT_EQ(r.schemas().at(1).data, std::string("\x00\x01\xff", 3));
  EXPECT_EQ(r.schemas().at(2).data, "{}");
  ASSERT_EQ(r.channels().size(), 3U);
  EXPECT_EQ(r.channels().at(1).topic, "/a");
  EXPECT_EQ(r.channels().at(1).schema_id, 1);
  EXPECT_EQ(r.channels().at(1).message_encoding, "protobuf");
  EXPECT_EQ(r.channels().at(1).metadata,
            (std::map<std::string, std::string>{{"k", "v"}, {"x", ""}}));
  EXPECT_EQ(r.channels().at(3).schema_id, 0);
  EXPECT_EQ(read_all(r), written);
}

INSTANTIATE_TEST_SUITE_P(EachCompression, McapRoundTrip,
                         ::testing::Values(Compression::kNone, Compression::kZstd,
                                           Compression::kLz4),
                         [](const auto& info) {
                           const std::string_view name = compression_name(info.param);
                           return name.empty() ? std::string("none") : std::string(name);
                         });

TEST(McapFormat, LayoutFollowsTheSpecByteForByte) {
  for (const Compression compression : {Compression::kZstd, Compression::kLz4}) {
    TempFile file("layout");
    {
      Writer w(file.path(), {compression, 1 << 20, "", "tether"});
      const std::uint16_t c = w.add_channel(w.add_schema("s", "x-s", "d"), "/t", "x-e");
      w.write(c, 5, 4, "hello", 9);
      w.close();
    }
    const std::string f = read_bytes(file.path());
    const std::string magic("\x89MCAP0\r\n", 8);
    ASSERT_GT(f.size(), 100U);
    EXPECT_EQ(f.substr(0, 8), magic);
    EXPECT_EQ(f.substr(f.size() - 8), magic);
    // Header: opcode 1, length, profile "", library "tether".
    EXPECT_EQ(f[8], 0x01);
    EXPECT_EQ(le(f, 9, 8), 4U + 0 + 4 + 6);
    EXPECT_EQ(f.substr(21, 10), std::string("\x06\x00\x00\x00tether", 10));
    // Schema (31 + 9 bytes) and Channel follow; then the Chunk.
    std::size_t at = 31;
    EXPECT_EQ(f[at], 0x03);
    at += 9 + le(f, at + 1, 8);
    EXPECT_EQ(f[at], 0x04);
    at += 9 + le(f, at + 1, 8);
    ASSERT_EQ(f[at], 0x06);
    EXPECT_EQ(le(f, at + 9, 8), 5U);            // message_start_time
    EXPECT_EQ(le(f, at + 17, 8), 5U);           // message_end_time
    EXPECT_EQ(le(f, at + 25, 8), 9U + 22 + 5);  // uncompressed_size
    const std::string name(compression_name(compression));
    EXPECT_EQ(le(f, at + 37, 4), name.size());
    EXPECT_EQ(f.substr(at + 41, name.size()), name);
    const std::size_t records = at + 41 + name.size() + 8;
    // A zstd frame's magic, or an LZ4 *frame*'s (not a raw LZ4 block).
    EXPECT_EQ(le(f, records, 4), compression == Compression::kZstd ? 0xFD2FB528U : 0x184D2204U);
    at += 9 + le(f, at + 1, 8);
    // Message Index: channel 1, one (log_time, offset 0) entry.
    ASSERT_EQ(f[at], 0x07);
    EXPECT_EQ(le(f, at + 1, 8), 2U + 4 + 16);
    EXPECT_EQ(le(f, at + 9, 2), 1U);
    EXPECT_EQ(le(f, at + 11, 4), 16U);
    EXPECT_EQ(le(f, at + 15, 8), 5U);
    EXPECT_EQ(le(f, at + 23, 8), 0U);
    at += 9 + le(f, at + 1, 8);
    // Data End, then the summary the footer points at, then Summary Offsets.
    ASSERT_EQ(f[at], 0x0F);
    EXPECT_EQ(le(f, at + 1, 8), 4U);
    const std::size_t footer = f.size() - 8 - 29;
    ASSERT_EQ(f[footer], 0x02);
    EXPECT_EQ(le(f, footer + 1, 8), 20U);
    EXPECT_EQ(le(f, footer + 9, 8), at + 13);  // summary_start
    std::size_t offsets = le(f, footer + 17, 8);
    std::vector<int> groups;
    while (offsets < footer) {
      EXPECT_EQ(f[offsets], 0x0E);
      groups.push_back(f[offsets + 9]);
      EXPECT_EQ(f[le(f, offsets + 10, 8)], f[offsets + 9]);  // group_start holds its opcode
      offsets += 9 + le(f, offsets + 1, 8);
    }
    EXPECT_EQ(offsets, footer);
    EXPECT_EQ(groups, (std::vector<int>{0x03, 0x04, 0x0B, 0x08}));
  }
}

TEST(McapRoundTrip, ManyChannelsKeepTheirTopicsMetadataAndMessages) {
  TempFile file("many_channels");
  std::vector<Written> written;
  {
    Writer w(file.path(), {Compression::kZstd, 8192, "", "tether"});
    const std::uint16_t s = w.add_schema("s", "x-s", "");
    for (int i = 0; i < 300; ++i) {
      EXPECT_EQ(w.add_channel(s, numbered("/topic/", i), "x-e", {{"index", std::to_string(i)}}),
                i + 1);
    }
    for (std::uint32_t k = 0; k < 3000; ++k) {
      const auto ch = static_cast<std::uint16_t>(1 + (k * 7) % 300);
      written.push_back({ch, k, k, k, numbered("m", k)});
      w.write(ch, k, k, written.back().data, k);
    }
  }  // closed by the destructor
  const Reader r(file.path());
  ASSERT_EQ(r.channels().size(), 300U);
  for (const auto& [id, c] : r.channels()) {
    EXPECT_EQ(c.topic, numbered("/topic/", id - 1));
    EXPECT_EQ(c.metadata.at("index"), std::to_string(id - 1));
  }
  EXPECT_EQ(read_all(r), written);
  EXPECT_EQ(r.statistics().channel_message_counts.size(), 300U);
  EXPECT_EQ(r.statistics().channel_message_counts.at(1), 10U);
}

TEST(McapReader, MessagesWrittenOutOfOrderComeBackSortedTiesInWriteOrder) {
  TempFile file("out_of_order");
  std::mt19937 rng(11);
  std::vector<Written> written;
  {
    Writer w(file.path(), {Compression::kLz4, 2048, "", "tether"});
    const std::uint16_t a = w.add_channel(0, "/a", "x");
    const std::uint16_t b = w.add_channel(0, "/b", "x");
    for (std::uint32_t i = 0; i < 5000; ++i) {
      // Jittered around a rising clock, with many equal times: chunks overlap in time.
      const std::uint64_t t = 10'000 + i / 4 * 3 + rng() % 40;
      written.push_back({(i % 2) != 0U ? a : b, i, t, t, std::to_string(i)});
      w.write(written.back().channel, t, t, written.back().data, i);
    }
  }
  std::stable_sort(written.begin(), written.end(),
                   [](const Written& x, const Written& y) { return x.log_time < y.log_time; });
  const Reader r(file.path());
  EXPECT_GT(r.statistics().chunk_count, 50U);
  EXPECT_EQ(read_all(r), written);
}

TEST(McapReader, RangeQueriesReturnExactlyTheMessagesInRange) {
  TempFile file("ranges");
  std::mt19937 rng(3);
  std::vector<Written> written;
  {
    Writer w(file.path(), {Compression::kZstd, 16384, "", "tether"});
    const std::uint16_t c = w.add_channel(0, "/c", "x");
    std::uint64_t t = 1'000'000;
    for (std::uint32_t i = 0; i < 20000; ++i) {
      t += rng() % 3;  // ties too
      written.push_back({c, i, t, t + 1, payload(rng, i).substr(0, 30)});
      w.write(c, t, t + 1, written.back().data, i);
    }
  }
  const Reader r(file.path());
  EXPECT_GT(r.statistics().chunk_count, 30U);
  const std::uint64_t first = written.front().log_time;
  const std::uint64_t last = written.back().log_time;
  for (int k = 0; k < 40; ++k) {
    std::uint64_t start = first - 5 + rng() % (last - first + 10);
    std::uint64_t end = first - 5 + rng() % (last - first + 10);
    if (start > end) std::swap(start, end);
    std::vector<Written> expected;
    for (const Written& m : written) {
      if (m.log_time >= start && m.log_time < end) expected.push_back(m);
    }
    EXPECT_EQ(read_all(r, start, end), expected) << "[" << start << ", " << end << ")";
  }
  EXPECT_TRUE(read_all(r, last + 1, UINT64_MAX).empty());
  EXPECT_TRUE(read_all(r, 5, 5).empty());
}

TEST(McapReader, TheDefaultRangeIncludesTheLargestTimestamp) {
  TempFile file("largest");
  {
    Writer w(file.path());
    const std::uint16_t c = w.add_channel(0, "/c", "x");
    w.write(c, UINT64_MAX, 0, "last");
    w.write(c, 0, 0, "first");
  }
  const Reader r(file.path());
  const std::vector<Written> all = read_all(r);
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].data, "first");
  EXPECT_EQ(all[1].data, "last");
  EXPECT_EQ(read_all(r, UINT64_MAX).size(), 1U);
  EXPECT_EQ(read_all(r, 1, UINT64_MAX - 1).size(), 0U);
}

TEST(McapReader, RangeQueriesSkipChunksOutsideTheRangeThroughTheChunkIndex) {
  TempFile file("skip");
  {
    Writer w(file.path(), {Compression::kNone, 1024, "", "tether"});
    const std::uint16_t c = w.add_channel(0, "/c", "x");
    for (std::uint32_t i = 0; i < 1000; ++i) {
      w.write(c, i, i, numbered("message-", 100000 + i), i);
    }
  }
  // Corrupt a message of the first chunk: a query that reads that chunk must fail, one that
  // skips it must not even look at it.
  std::string bytes = read_bytes(file.path());
  const std::size_t at = bytes.find("message-100003");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 3] ^= 0x20;
  const Reader r(std::move(bytes), "corrupt.mcap");
  const std::vector<Written> tail = read_all(r, 500, 1000);
  ASSERT_EQ(tail.size(), 500U);
  EXPECT_EQ(tail.front().data, "message-100500");
  EXPECT_NE(error_of([&] { read_all(r, 0, 10); }).find("chunk CRC mismatch"), std::string::npos);
}

TEST(McapStatistics, CountEverythingWrittenInWriterAndReader) {
  TempFile file("statistics");
  Statistics expected;
  {
    Writer w(file.path(), {Compression::kZstd, 1000, "", "tether"});
    const std::uint16_t s = w.add_schema("s", "x", "");
    EXPECT_EQ(w.add_schema("s", "x", ""), s);  // the same schema, added once
    const std::uint16_t a = w.add_channel(s, "/a", "x");
    const std::uint16_t b = w.add_channel(s, "/b", "x");
    w.add_channel(s, "/never", "x");
    for (std::uint32_t i = 0; i < 100; ++i)
      w.write(i < 70 ? a : b, 500 - i, 0, std::string(40, 'x'));
    w.add_metadata("m1", {});
    w.add_metadata("m2", {{"a", "b"}});
    w.add_attachment("at", "text/plain", 3, "abc");
    w.close();
    expected = w.statistics();
  }
  EXPECT_EQ(expected.message_count, 100U);
  EXPECT_EQ(expected.schema_count, 1);
  EXPECT_EQ(expected.channel_count, 3U);
  EXPECT_EQ(expected.metadata_count, 2U);
  EXPECT_EQ(expected.attachment_count, 1U);
  EXPECT_EQ(expected.message_start_time, 401U);
  EXPECT_EQ(expected.message_end_time, 500U);
  EXPECT_EQ(expected.channel_message_counts,
            (std::map<std::uint16_t, std::uint64_t>{{1, 70}, {2, 30}}));
  // 100 messages of 71 bytes, a chunk closing once it holds 1000: every 15 messages.
  EXPECT_EQ(expected.chunk_count, 7U);

  const auto same = [](const Statistics& x, const Statistics& y) {
    return std::tie(x.message_count, x.schema_count, x.channel_count, x.attachment_count,
                    x.metadata_count, x.chunk_count, x.message_start_time, x.message_end_time,
                    x.channel_message_counts) ==
           std::tie(y.message_count, y.schema_count, y.channel_count, y.attachment_count,
                    y.metadata_count, y.chunk_count, y.message_start_time, y.message_end_time,
                    y.channel_message_counts);
  };
  const Reader indexed(file.path());
  EXPECT_TRUE(same(indexed.statistics(), expected));
  // Without its footer the file is scanned, and the scan counts the same.
  std::string bytes = read_bytes(file.path());
  bytes.resize(bytes.size() - 1);
  const Reader scanned(std::move(bytes), "cut.mcap");
  EXPECT_TRUE(scanned.truncated());
  EXPECT_TRUE(same(scanned.statistics(), expected));
}

TEST(McapRoundTrip, MetadataAndAttachmentsComeBackInOrder) {
  TempFile file("metadata");
  const std::string binary("\x00\x89MCAP0\r\n\xff", 10);
  {
    Writer w(file.path());
    const std::uint16_t c = w.add_channel(0, "/c", "x");
    w.add_metadata("tether.site", {{"arm", "iiwa7"}, {"site", "remote"}});
    w.write(c, 1, 1, "m");  // the chunk stays open across the records below
    w.add_attachment("scene.urdf", "application/xml", 42, "<robot/>");
    w.add_metadata("empty", {});
    w.add_attachment("core", "application/octet-stream", 43, binary);
  }
  for (const bool cut : {false, true}) {
    std::string bytes = read_bytes(file.path());
    if (cut) bytes.resize(bytes.size() - 30);  // into the footer: scanned instead
    const Reader r(std::move(bytes), "metadata.mcap");
    EXPECT_EQ(r.truncated(), cut);
    ASSERT_EQ(r.metadata().size(), 2U);
    EXPECT_EQ(r.metadata()[0].first, "tether.site");
    EXPECT_EQ(r.metadata()[0].second,
              (std::map<std::string, std::string>{{"arm", "iiwa7"}, {"site", "remote"}}));
    EXPECT_EQ(r.metadata()[1].first, "empty");
    EXPECT_TRUE(r.metadata()[1].second.empty());
    const auto attachments = r.attachments();
    ASSERT_EQ(attachments.size(), 2U);
    EXPECT_EQ(attachments[0], (std::pair<std::string, std::string>{"scene.urdf", "<robot/>"}));
    EXPECT_EQ(attachments[1], (std::pair<std::string, std::string>{"core", binary}));
    EXPECT_EQ(read_all(r).size(), 1U);
  }
}

TEST(McapReader, RejectsAnAttachmentWhoseCrcDoesNotMatch) {
  TempFile file("attachment_crc");
  {
    Writer w(file.path());
    w.add_attachment("a", "text/plain", 1, "attachment-data");
  }
  std::string bytes = read_bytes(file.path());
  bytes[bytes.find("attachment-data")] ^= 1;
  const Reader r(std::move(bytes), "a.mcap");
  EXPECT_NE(error_of([&] { (void)r.attachments(); }).find("attachment \"a\" CRC mismatch"),
            std::string::npos);
}

// A writer killed at any byte after a sync(): the file reads as truncated, with exactly the
// messages of the chunks that are complete on disk.
TEST(McapRecovery, AFileCutAnywhereKeepsExactlyTheCompleteChunks) {
  TempFile file("recovery");
  constexpr std::size_t kPerChunk = 7;
  std::vector<Written> written;
  std::vector<std::uint64_t> chunk_ends;  // where each Chunk record ends
  std::string synced;
  {
    Writer w(file.path(), {Compression::kZstd, 1 << 20, "", "tether"});
    const std::uint16_t c = w.add_channel(w.add_schema("s", "x", "schema"), "/c", "x");
    for (std::uint32_t i = 0; i < 12 * kPerChunk; ++i) {
      written.push_back({c, i, 100 + std::uint64_t{i}, 100, numbered("message ", i)});
      w.write(c, written.back().log_time, 100, written.back().data, i);
      if ((i + 1) % kPerChunk == 0) {
        w.flush_chunk();
        // The chunk's one Message Index record follows it: 9 + 2 + 4 + 16 per message.
        chunk_ends.push_back(w.bytes_written() - (9 + 2 + 4 + 16 * kPerChunk));
      }
    }
    w.sync();
    synced = read_bytes(file.path());
    EXPECT_EQ(synced.size(), w.bytes_written());
  }  // (the destructor completes the file; the copy is what a crash would have left)

  for (std::size_t end = 97; end < synced.size(); end += 97) {
    const Reader r(synced.substr(0, end), "cut.mcap");
    EXPECT_TRUE(r.truncated());
    const auto complete = static_cast<std::size_t>(
        std::count_if(chunk_ends.begin(), chunk_ends.end(), [&](auto e) { return e <= end; }));
    const std::vector<Written> expected(written.begin(),
                                        written.begin() + static_cast<long>(complete * kPerChunk));
    EXPECT_EQ(read_all(r), expected) << "cut at " << end;
    EXPECT_EQ(r.statistics().chunk_count, complete);
    EXPECT_EQ(r.statistics().message_count, expected.size());
  }
  const Reader whole(synced, "unclosed.mcap");
  EXPECT_TRUE(whole.truncated());
  EXPECT_EQ(read_all(whole), written);
  EXPECT_EQ(whole.schemas().at(1).data, "schema");
  EXPECT_FALSE(Reader(file.path()).truncated());
}

TEST(McapReader, RejectsAFlippedByteInAChunkNamingTheCrc) {
  TempFile file("flipped");
  {
    Writer w(file.path(), {Compression::kNone, 1 << 20, "", "tether"});
    const std::uint16_t c = w.add_channel(0, "/c", "x");
    for (std::uint32_t i = 0; i < 20; ++i) w.write(c, i + 1, i, numbered("data-", i));
  }
  std::string bytes = read_bytes(file.path());
  bytes[bytes.find("data-7")] ^= 0x01;
  const Reader r(std::move(bytes), "flipped.mcap");
  // Everything: the data section's CRC first; a range: the chunk's own CRC.
  EXPECT_NE(error_of([&] { read_all(r); }).find("data section CRC mismatch"), std::string::npos);
  const std::string error = error_of([&] { read_all(r, 1, 2); });
  EXPECT_NE(error.find("flipped.mcap: offset "), std::string::npos) << error;
  EXPECT_NE(error.find("chunk CRC mismatch"), std::string::npos) << error;

  // In a compressed chunk the flip is caught too, by zstd's decoder or by the CRC.
  TempFile zstd_file("flipped_zstd");
  {
    Writer w(zstd_file.path());
    const std::uint16_t c = w.add_channel(0, "/c", "x");
    for (std::uint32_t i = 0; i < 200; ++i) w.write(c, i + 1, i, numbered("data-", i));
  }
  bytes = read_bytes(zstd_file.path());
  const std::size_t footer = bytes.size() - 8 - 29;
  const std::size_t chunk = 8 + 9 + le(bytes, 9, 8) + 9 + le(bytes, 8 + 9 + le(bytes, 9, 8) + 1, 8);
  ASSERT_EQ(bytes[chunk], 0x06);
  ASSERT_LT(chunk + 80, footer);
  bytes[chunk + 80] ^= 0x10;  // inside the zstd frame
  const Reader z(std::move(bytes), "flipped_zstd.mcap");
  EXPECT_THROW(read_all(z, 1, 1000), std::runtime_error);
}

TEST(McapReader, RejectsABadMagicAtOffsetZero) {
  TempFile file("magic");
  { Writer w(file.path()); }
  std::string bytes = read_bytes(file.path());
  bytes[1] = 'N';
  const std::string error = error_of([&] { Reader r(bytes, "bad.mcap"); });
  EXPECT_EQ(error, "bad.mcap: offset 0: not an MCAP file: no leading magic");
  EXPECT_NE(error_of([] { Reader r(std::string(), "empty.mcap"); }).find("magic"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Reader r(fs::path("/nonexistent/x.mcap"));
            }).find("/nonexistent/x.mcap: cannot open"),
            std::string::npos);
}

TEST(McapReader, RejectsASummaryCrcMismatch) {
  TempFile file("summary_crc");
  {
    Writer w(file.path());
    w.add_channel(0, "/a-topic-name", "x");
  }
  std::string bytes = read_bytes(file.path());
  bytes[bytes.rfind("/a-topic-name") + 1] ^= 0x01;  // the summary's copy of the Channel
  const std::string error = error_of([&] { Reader r(bytes, "s.mcap"); });
  EXPECT_NE(error.find("s.mcap: offset "), std::string::npos) << error;
  EXPECT_NE(error.find("summary CRC mismatch"), std::string::npos) << error;
}

// Hand-made files: lengths and sizes an attacker chooses are checked, not trusted.
std::string record(std::uint8_t op, const std::string& content) {
  std::string r(1, static_cast<char>(op));
  for (int i = 0; i < 8; ++i) r.push_back(static_cast<char>(content.size() >> (8 * i)));
  return r + content;
}
std::string u64(std::uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
std::string u32(std::uint32_t v) { return u64(v).substr(0, 4); }

TEST(McapReader, RejectsHostileLengthsAndSizesWithTheirOffset) {
  const std::string magic("\x89MCAP0\r\n", 8);
  const std::string header = record(0x01, u32(0) + u32(0));
  // A chunk claiming 2 GiB uncompressed.
  const std::string huge = record(
      0x06, u64(0) + u64(0) + u64(std::uint64_t{2} << 30) + u32(0) + u32(4) + "zstd" + u64(0));
  EXPECT_NE(error_of([&] {
              Reader r(magic + header + huge, "h.mcap");
            }).find("h.mcap: offset 25: chunk uncompressed_size 2147483648 exceeds"),
            std::string::npos);
  // A record length past the end of a complete file's summary.
  const std::string summary = "\x03" + u64(~std::uint64_t{0});
  const std::size_t summary_start = magic.size() + header.size();
  const std::string footer = record(0x02, u64(summary_start) + u64(0) + u32(0));
  const std::string error =
      error_of([&] { Reader r(magic + header + summary + footer + magic, "l.mcap"); });
  EXPECT_NE(error.find("l.mcap: offset 25: record length runs past the end"), std::string::npos)
      << error;
  // A chunk whose zstd data decompresses to less than it claims.
  const std::string small = record(
      0x06, u64(0) + u64(0) + u64(1000) + u32(0) + u32(4) + "zstd" + u64(4) + "\x28\xb5\x2f\xfd");
  EXPECT_THROW(Reader(magic + header + small, "z.mcap"), std::runtime_error);
  // A message on a channel nobody defined.
  const std::string message = record(0x05, std::string(2, '\x07') + std::string(20, '\0'));
  EXPECT_NE(error_of([&] {
              Reader r(magic + header + message, "m.mcap");
            }).find("message on channel 1799"),
            std::string::npos);
}

// Other writers may put messages outside chunks (which no index can point at): read in
// log_time order from a file without summary and from one whose summary indexes no chunk.
TEST(McapReader, ReadsMessagesOutsideChunksWithAndWithoutSummary) {
  const std::string magic("\x89MCAP0\r\n", 8);
  const std::string header = record(0x01, u32(0) + u32(0));
  const std::string channel =
      record(0x04, std::string("\x03\x00\x00\x00", 4) + u32(2) + "/t" + u32(4) + "json" + u32(0));
  const auto message = [&](std::uint64_t t, const std::string& data) {
    return record(0x05, std::string("\x03\x00", 2) + u32(0) + u64(t) + u64(t) + data);
  };
  const std::string data = magic + header + channel + message(30, "c") + message(10, "a") +
                           message(20, "b") + record(0x0F, u32(0));
  const auto texts = [](const Reader& r, std::uint64_t start, std::uint64_t end) {
    std::string out;
    for (const Written& m : read_all(r, start, end)) out += m.data;
    return out;
  };
  // No summary: the footer's summary_start is 0.
  const Reader plain(data + record(0x02, u64(0) + u64(0) + u32(0)) + magic, "plain.mcap");
  EXPECT_FALSE(plain.truncated());
  EXPECT_EQ(texts(plain, 0, UINT64_MAX), "abc");
  EXPECT_EQ(texts(plain, 15, 31), "bc");
  EXPECT_EQ(plain.statistics().message_count, 3U);
  // A summary with the Channel only.
  const Reader indexed(data + channel + record(0x02, u64(data.size()) + u64(0) + u32(0)) + magic,
                       "indexed.mcap");
  EXPECT_FALSE(indexed.truncated());
  EXPECT_EQ(texts(indexed, 0, UINT64_MAX), "abc");
  EXPECT_EQ(texts(indexed, 0, 20), "a");
}

TEST(McapWriter, RejectsUnknownIdsAndUseAfterClose) {
  TempFile file("misuse");
  Writer w(file.path());
  EXPECT_THROW(w.add_channel(1, "/t", "x"), std::invalid_argument);
  const std::uint16_t c = w.add_channel(0, "/t", "x");
  EXPECT_THROW(w.write(static_cast<std::uint16_t>(c + 1), 0, 0, "x"), std::invalid_argument);
  EXPECT_THROW(w.write(0, 0, 0, "x"), std::invalid_argument);
  w.close();
  const std::uint64_t size = w.bytes_written();
  EXPECT_EQ(fs::file_size(file.path()), size);
  w.close();  // idempotent
  EXPECT_THROW(w.write(c, 0, 0, "x"), std::logic_error);
  EXPECT_EQ(fs::file_size(file.path()), size);
  EXPECT_NE(error_of([] {
              Writer bad("/nonexistent/dir/x.mcap");
            }).find("/nonexistent/dir/x.mcap: cannot create: No such file or directory"),
            std::string::npos);
}

}  // namespace
}  // namespace tether::mcap
