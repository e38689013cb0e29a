// The MCAP writer on the recorders' threads (black box, ground sessions) at 1 kHz: once a
// chunk's buffers have grown, writing a message allocates nothing until the chunk closes.
// An executable of its own: the malloc counter replaces the sanitizers' malloc.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "allocation_counter.h"
#include "tether/mcap/writer.h"

namespace tether::mcap {
namespace {

TEST(McapWriterAllocation, WriteAllocatesNothingOnceBuffersHaveGrown) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("tether_mcap_allocation_" + std::to_string(::getpid()) + ".mcap");
  {
    Writer w(path, {Compression::kZstd, std::size_t{64} * 1024, "", "tether"});
    const std::uint16_t a = w.add_channel(0, "/a", "x");
    const std::uint16_t b = w.add_channel(0, "/b", "x");
    const std::string data(200, 'd');
    std::uint64_t t = 0;
    const auto write_pair = [&] {
      t += 2;
      w.write(a, t - 1, t - 1, data);
      w.write(b, t, t, data);
    };
    while (w.statistics().chunk_count < 3) write_pair();  // grows every buffer
    w.flush_chunk();
    std::size_t allocations = 0;
    {
      testing::ScopedAllocationCounter counter;
      for (int i = 0; i < 100; ++i) write_pair();
      allocations = counter.count();
    }
    EXPECT_EQ(allocations, 0U);
    EXPECT_EQ(w.statistics().chunk_count, 3U);  // the 200 messages are in the open chunk
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tether::mcap
