// Link scripts: the profile changing over time, every error naming the line and the token.

#include "tether/linkem/link_script.h"

#include <gtest/gtest.h>

namespace tether::linkem {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_link_script(text, "link.script");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(LinkScript, AppliesItsLinesInTimeOrder) {
  const auto events = parse_link_script(
      "# a satellite pass\nat 5s down bandwidth=1Mbit/s\nat 0 both delay=250ms jitter=25ms "
      "distribution=normal\nat 8 up stall 2s\nat 12s cut\n",
      "link.script");
  ASSERT_EQ(events.size(), 4U);
  LinkProfile p;
  for (const auto& e : events) e.apply(p);
  EXPECT_DOUBLE_EQ(events[0].time, 0.0);
  EXPECT_DOUBLE_EQ(p.up.delay, 0.25);
  EXPECT_DOUBLE_EQ(p.down.jitter, 0.025);
  EXPECT_EQ(p.up.distribution, Jitter::kNormal);
  EXPECT_DOUBLE_EQ(p.down.bandwidth, 125000.0);
  EXPECT_DOUBLE_EQ(p.up.bandwidth, 0.0);
  ASSERT_EQ(p.up.stalls.size(), 1U);
  EXPECT_DOUBLE_EQ(p.up.stalls[0].start, 8.0);
  EXPECT_DOUBLE_EQ(p.up.stalls[0].end, 10.0);
  EXPECT_TRUE(p.down.stalls.empty());
  EXPECT_EQ(p.cuts, std::vector<double>{12.0});
}

TEST(LinkScript, NamesTheLineAndTheTokenOfEveryError) {
  EXPECT_EQ(error_of("at 1 sideways delay=1s\n"),
            "link.script:1: direction 'sideways': expected up, down, both or cut");
  EXPECT_EQ(error_of("\nat 1 up delay=fast\n"), "link.script:2: 'fast': not a number");
  EXPECT_EQ(error_of("at 1 up delay=5m\n"), "link.script:1: '5m': expected a time in s, ms or us");
  EXPECT_EQ(error_of("at 1 up bandwidth=5GB/s\n"),
            "link.script:1: '5GB/s': expected a rate in B/s, kB/s, MB/s, kbit/s or Mbit/s");
  EXPECT_EQ(error_of("at 1 up colour=red\n"),
            "link.script:1: setting 'colour': expected delay, jitter, distribution or bandwidth");
  EXPECT_EQ(error_of("in 1 up delay=1s\n"),
            "link.script:1: expected 'at TIME DIRECTION SETTINGS' or 'at TIME cut'");
  EXPECT_NE(error_of("at 0 up delay=10ms jitter=20ms\n").find("up.jitter"), std::string::npos);
}

}  // namespace
}  // namespace tether::linkem
