// MCAP recordings as the reader gets them from any disk (tether/mcap/reader.h): any bytes are
// either refused with std::runtime_error or read, and what is read holds together:
//  - messages come in log_time order (ties in file order), on channels the file defines;
//  - a range query returns exactly the messages of the full query in its range;
//  - a recovered (truncated) file's statistics count the messages the full query returns.
// The seed corpus holds small files tether's writer made (each compression, metadata and
// attachments, a file cut short). A crash, a sanitizer report or a violated invariant is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "tether/mcap/reader.h"

namespace {

using tether::mcap::Channel;
using tether::mcap::Message;
using tether::mcap::Reader;

void require(bool condition) {
  if (!condition) std::abort();
}

using Read = std::tuple<std::uint64_t, std::uint16_t, std::uint32_t, std::string>;

// The reader's range: [start, end), but end UINT64_MAX has no upper bound.
bool in_range(std::uint64_t t, std::uint64_t start, std::uint64_t end) {
  return t >= start && (t < end || end == UINT64_MAX);
}

// Every message in [start, end), checking order and channels; nothing if the read throws.
std::optional<std::vector<Read>> read(const Reader& reader, std::uint64_t start,
                                      std::uint64_t end) {
  std::vector<Read> out;
  try {
    reader.for_each_message(
        [&](const Channel& c, const Message& m) {
          require(c.id == m.channel_id && reader.channels().contains(c.id));
          require(in_range(m.log_time, start, end));
          require(out.empty() || std::get<0>(out.back()) <= m.log_time);
          out.emplace_back(m.log_time, m.channel_id, m.sequence, std::string(m.data));
        },
        start, end);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<Reader> reader;
  try {
    reader.emplace(std::string(reinterpret_cast<const char*>(data), size), "fuzz.mcap");
  } catch (const std::runtime_error&) {
    return 0;
  }
  for (const auto& [id, channel] : reader->channels()) require(id == channel.id);
  for (const auto& [id, schema] : reader->schemas()) require(id == schema.id && id != 0);
  try {
    (void)reader->attachments();
  } catch (const std::runtime_error&) {
  }

  const std::optional<std::vector<Read>> all = read(*reader, 0, UINT64_MAX);
  if (!all) return 0;
  if (reader->truncated()) require(reader->statistics().message_count == all->size());
  if (all->empty()) return 0;
  // A range from the file's own times: from its second message to its last (exclusive).
  const std::uint64_t start = std::get<0>((*all)[all->size() > 1 ? 1 : 0]);
  const std::uint64_t end = std::get<0>(all->back());
  const std::optional<std::vector<Read>> range = read(*reader, start, end);
  require(range.has_value());
  std::vector<Read> expected;
  for (const Read& r : *all) {
    if (in_range(std::get<0>(r), start, end)) expected.push_back(r);
  }
  require(*range == expected);
  return 0;
}
