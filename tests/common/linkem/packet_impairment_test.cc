// The packet link's impairment model in virtual time (no root, no devices): each setting
// shows up in what it decides with the statistics it promises — delay percentiles, order,
// loss rates and burst lengths within their sampling bounds, the rate limit's throughput and
// drop-tail queue, outages — deterministically for a seed; and the packet scripts and value
// parsers that feed it name every error.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "tether/linkem/packet_link.h"

namespace tether::linkem {
namespace {

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

// Added delays [s] of `count` packets of `bytes` arriving every `gap` [s].
std::vector<double> added_delays(PacketImpairment& model, int count, double gap,
                                 std::size_t bytes = 100) {
  std::vector<double> delays;
  for (int i = 0; i < count; ++i) {
    const double t = i * gap;
    const PacketVerdict v = model.arrive(t, bytes);
    if (v.fate == PacketFate::kForwarded) delays.push_back(v.departure - t);
  }
  return delays;
}

std::string error_of(const PacketProfile& profile) {
  try {
    validate(profile, "up");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

std::string script_error_of(const std::string& text) {
  try {
    parse_packet_script(text, "link.script");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(PacketImpairment, UniformJitterCentresOnTheDelayAndNothingLeavesEarly) {
  PacketProfile p;
  p.delay = 0.050;
  p.jitter = 0.005;
  p.reorder = true;  // each packet its own delay, so the percentiles are the distribution's
  PacketImpairment model(p, 7);
  const std::vector<double> d = added_delays(model, 100000, 1e-3);
  ASSERT_EQ(d.size(), 100000U);
  // Uniform in [45, 55] ms: p50 50 ms, p99 54.9 ms; the sample percentiles of 1e5 draws sit
  // within ~0.05 ms of them.
  EXPECT_NEAR(percentile(d, 0.50), 0.050, 2e-4);
  EXPECT_NEAR(percentile(d, 0.99), 0.0549, 2e-4);
  EXPECT_GE(*std::min_element(d.begin(), d.end()), p.delay - p.jitter - 1e-12);
  EXPECT_LE(*std::max_element(d.begin(), d.end()), p.delay + p.jitter);
}

TEST(PacketImpairment, NormalJitterHasItsSigmaAndIsClippedAtThreeSigma) {
  PacketProfile p;
  p.delay = 0.050;
  p.jitter = 0.005;
  p.distribution = Jitter::kNormal;
  p.reorder = true;
  PacketImpairment model(p, 7);
  const std::vector<double> d = added_delays(model, 100000, 1e-3);
  EXPECT_NEAR(percentile(d, 0.50), 0.050, 2e-4);
  EXPECT_NEAR(percentile(d, 0.99), 0.050 + 2.326 * 0.005, 5e-4);
  EXPECT_GE(*std::min_element(d.begin(), d.end()), p.delay - 3 * p.jitter - 1e-12);
  EXPECT_LE(*std::max_element(d.begin(), d.end()), p.delay + 3 * p.jitter + 1e-12);
}

TEST(PacketImpairment, KeepsOrderUnlessReorderIsOn) {
  PacketProfile p;
  p.delay = 0.020;
  p.jitter = 0.010;  // far larger than the 0.1 ms gaps: unordered, they would overtake
  const auto departures = [&](bool reorder) {
    p.reorder = reorder;
    PacketImpairment model(p, 3);
    std::vector<double> out;
    for (int i = 0; i < 10000; ++i) {
      const double t = i * 1e-4;
      const PacketVerdict v = model.arrive(t, 100);
      EXPECT_GE(v.departure, t + p.delay - p.jitter - 1e-12);  // held back, never sped up
      out.push_back(v.departure);
    }
    return out;
  };
  const std::vector<double> kept = departures(false);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  const std::vector<double> free = departures(true);
  EXPECT_FALSE(std::is_sorted(free.begin(), free.end()));
}

TEST(PacketImpairment, BernoulliLossRateIsWithinFiveSigmaOfTheSetting) {
  PacketProfile p;
  p.loss = 0.01;
  PacketImpairment model(p, 11);
  constexpr int kPackets = 200000;
  for (int i = 0; i < kPackets; ++i) model.arrive(i * 1e-4, 100);
  const PacketCounters& c = model.counters();
  const double mean = kPackets * p.loss;
  const double sigma = std::sqrt(kPackets * p.loss * (1.0 - p.loss));
  EXPECT_NEAR(static_cast<double>(c.lost_random), mean, 5.0 * sigma);
  EXPECT_EQ(c.lost_random + c.forwarded, static_cast<std::uint64_t>(kPackets));
  EXPECT_EQ(c.packets_in, static_cast<std::uint64_t>(kPackets));
  EXPECT_EQ(c.lost_burst, 0U);
  EXPECT_EQ(c.bursts, 0U);
}

TEST(PacketImpairment, GilbertElliottLosesAtTheLongRunRateInBurstsOfTheMeanLength) {
  PacketProfile p;
  p.loss = 0.05;
  p.burst = 4.0;
  PacketImpairment model(p, 13);
  constexpr int kPackets = 400000;
  std::vector<bool> lost;
  for (int i = 0; i < kPackets; ++i) {
    lost.push_back(model.arrive(i * 1e-4, 100).fate == PacketFate::kLostBurst);
  }
  const PacketCounters& c = model.counters();
  // Losses of a two-state chain are correlated: the variance of their count is the binomial
  // one times (1 + λ)/(1 − λ), λ = 1 − P(B→G) − P(G→B) the chain's second eigenvalue.
  const double r = 1.0 / p.burst;
  const double g = p.loss * r / (1.0 - p.loss);
  const double lambda = 1.0 - r - g;
  const double sigma =
      std::sqrt(kPackets * p.loss * (1.0 - p.loss) * (1.0 + lambda) / (1.0 - lambda));
  EXPECT_NEAR(static_cast<double>(c.lost_burst), kPackets * p.loss, 5.0 * sigma);
  EXPECT_EQ(c.lost_random, 0U);
  // Burst lengths are geometric with mean 1/r and variance (1 − r)/r².
  ASSERT_GT(c.bursts, 1000U);
  const double mean_burst = static_cast<double>(c.lost_burst) / static_cast<double>(c.bursts);
  EXPECT_NEAR(mean_burst, p.burst, 5.0 * std::sqrt((1.0 - r) / (r * r) / c.bursts));
  // Counted bursts are the runs of losses.
  std::uint64_t runs = 0;
  for (std::size_t i = 0; i < lost.size(); ++i) runs += lost[i] && (i == 0 || !lost[i - 1]);
  EXPECT_EQ(runs, c.bursts);
}

TEST(PacketImpairment, RateLimitPassesTheRateAndDropsWhatOverfillsTheQueue) {
  PacketProfile p;
  p.rate = 125000.0;  // 1 Mbit/s: a 1000-byte packet takes 8 ms
  p.queue = 20000.0;
  PacketImpairment model(p, 1);
  std::vector<double> departures;
  // Offered at twice the rate for 20 s.
  for (int i = 0; i < 5000; ++i) {
    const double t = i * 0.004;
    const PacketVerdict v = model.arrive(t, 1000);
    if (v.fate != PacketFate::kForwarded) continue;
    departures.push_back(v.departure);
    // Waits at most the queue's content plus its own serialisation.
    EXPECT_LE(v.departure - t, (p.queue + 1000.0) / p.rate + 1e-9);
  }
  const PacketCounters& c = model.counters();
  const double span = departures.back() - departures.front();
  EXPECT_NEAR((static_cast<double>(c.bytes_forwarded) - 1000.0) / span, p.rate, 0.01 * p.rate);
  EXPECT_NEAR(static_cast<double>(c.dropped_queue), 2500.0, 50.0);
  EXPECT_EQ(c.forwarded + c.dropped_queue, 5000U);
}

TEST(PacketImpairment, DropTailKeepsWhatFitsTheQueueOfABurst) {
  PacketProfile p;
  p.rate = 125000.0;
  p.queue = 10000.0;  // ten 1000-byte packets wait; one more is on the link
  PacketImpairment model(p, 1);
  for (int i = 0; i < 30; ++i) {
    const PacketVerdict v = model.arrive(0.0, 1000);
    if (i <= 10) {
      ASSERT_EQ(v.fate, PacketFate::kForwarded) << "packet " << i;
      EXPECT_NEAR(v.departure, (i + 1) * 0.008, 1e-12);
    } else {
      EXPECT_EQ(v.fate, PacketFate::kDroppedQueue) << "packet " << i;
    }
  }
  // Once the link has sent two, two fit again.
  EXPECT_EQ(model.arrive(0.0161, 1000).fate, PacketFate::kForwarded);
  EXPECT_EQ(model.arrive(0.0161, 1000).fate, PacketFate::kForwarded);
  EXPECT_EQ(model.arrive(0.0161, 1000).fate, PacketFate::kDroppedQueue);
}

TEST(PacketImpairment, OutagesLoseEverythingInsideAndNothingOutside) {
  PacketProfile p;
  p.delay = 0.010;
  p.outages = {{1.0, 2.0}, {2.5, 2.6}};
  PacketImpairment model(p, 1);
  std::uint64_t inside_count = 0;
  for (int i = 0; i < 3000; ++i) {
    const double t = i * 1e-3;
    const bool inside = (t >= 1.0 && t < 2.0) || (t >= 2.5 && t < 2.6);
    inside_count += inside;
    EXPECT_EQ(model.arrive(t, 100).fate, inside ? PacketFate::kLostOutage : PacketFate::kForwarded)
        << "t = " << t;
  }
  EXPECT_NEAR(static_cast<double>(inside_count), 1100.0, 1.0);
  EXPECT_EQ(model.counters().lost_outage, inside_count);
  EXPECT_EQ(model.counters().forwarded, 3000U - inside_count);
}

TEST(PacketImpairment, IsDeterministicForASeed) {
  PacketProfile p;
  p.delay = 0.02;
  p.jitter = 0.01;
  p.loss = 0.1;
  p.burst = 3.0;
  const auto run = [&](std::uint64_t seed) {
    PacketImpairment model(p, seed);
    std::vector<double> out;
    for (int i = 0; i < 1000; ++i) {
      const PacketVerdict v = model.arrive(i * 1e-3, 100);
      out.push_back(v.fate == PacketFate::kForwarded ? v.departure : -1.0);
    }
    return out;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(PacketImpairment, ValidateNamesTheFieldTheValueAndTheAllowedRange) {
  PacketProfile p;
  p.loss = 1.5;
  EXPECT_EQ(error_of(p), "up.loss: 1.5: allowed 0 … 1");
  p = {};
  p.delay = 0.01;
  p.jitter = 0.02;
  EXPECT_EQ(error_of(p), "up.jitter: 0.02: allowed 0 … the delay (0.01 s)");
  p = {};
  p.delay = 200.0;
  EXPECT_EQ(error_of(p), "up.delay: 200: allowed 0 … 100 s");
  p = {};
  p.burst = 0.5;
  EXPECT_EQ(error_of(p), "up.burst: 0.5: allowed 1 … 1000000 packets");
  p = {};
  p.burst = 4.0;
  p.loss = 0.9;
  EXPECT_EQ(error_of(p), "up.loss: 0.9: allowed 0 … 0.8 with burst 4 (burst/(burst + 1))");
  p = {};
  p.rate = -1.0;
  EXPECT_EQ(error_of(p), "up.rate: -1: allowed 0 … 1e12 bytes/s (0: none)");
  p = {};
  p.queue = -5.0;
  EXPECT_EQ(error_of(p), "up.queue: -5: allowed 0 … 1e9 bytes");
  p = {};
  p.outages = {{2.0, 1.0}};
  EXPECT_EQ(error_of(p), "up.outages: [2, 1): allowed windows with 0 ≤ start < end [s]");
  PacketLinkProfile link;
  link.down.loss = -0.1;
  EXPECT_THROW(
      {
        try {
          validate(link);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "down.loss: -0.1: allowed 0 … 1");
          throw;
        }
      },
      std::invalid_argument);
  p = {};
  p.loss = 2.0;
  EXPECT_THROW(PacketImpairment{p}, std::invalid_argument);
}

TEST(PacketScript, AppliesItsLinesInTimeOrder) {
  const auto events = parse_packet_script(
      "# a bad day\nat 5s up loss=2% burst=4\nat 0 both delay=50ms jitter=5ms "
      "distribution=normal reorder=on\nat 8s down rate=2Mbit/s queue=64kB\n"
      "at 12 both outage 2s\n",
      "link.script");
  ASSERT_EQ(events.size(), 4U);
  PacketLinkProfile p;
  for (const auto& e : events) e.apply(p);
  EXPECT_DOUBLE_EQ(events[0].time, 0.0);
  EXPECT_DOUBLE_EQ(p.up.delay, 0.05);
  EXPECT_DOUBLE_EQ(p.down.jitter, 0.005);
  EXPECT_EQ(p.down.distribution, Jitter::kNormal);
  EXPECT_TRUE(p.up.reorder);
  EXPECT_DOUBLE_EQ(p.up.loss, 0.02);
  EXPECT_DOUBLE_EQ(p.up.burst, 4.0);
  EXPECT_DOUBLE_EQ(p.down.loss, 0.0);
  EXPECT_DOUBLE_EQ(p.down.rate, 250000.0);
  EXPECT_DOUBLE_EQ(p.down.queue, 64000.0);
  EXPECT_DOUBLE_EQ(p.up.rate, 0.0);
  ASSERT_EQ(p.up.outages.size(), 1U);
  EXPECT_DOUBLE_EQ(p.up.outages[0].start, 12.0);
  EXPECT_DOUBLE_EQ(p.up.outages[0].end, 14.0);
  EXPECT_EQ(p.down.outages.size(), 1U);
}

TEST(PacketScript, NamesTheLineAndTheTokenOfEveryError) {
  EXPECT_EQ(script_error_of("at 1 sideways delay=1s\n"),
            "link.script:1: direction 'sideways': expected up, down or both");
  EXPECT_EQ(script_error_of("\nat 1 up loss=lots\n"), "link.script:2: 'lots': not a number");
  EXPECT_EQ(script_error_of("at 1 up loss=150%\n"),
            "link.script:1: '150%': allowed 0 … 1 (0 % … 100 %)");
  EXPECT_EQ(script_error_of("at 1 up queue=5GB\n"),
            "link.script:1: '5GB': expected a size in B, kB or MB");
  EXPECT_EQ(script_error_of("at 1 up reorder=maybe\n"),
            "link.script:1: reorder 'maybe': expected on or off");
  EXPECT_EQ(script_error_of("at 1 up burst=0.5\n"),
            "link.script:1: burst '0.5': expected a number ≥ 1");
  EXPECT_EQ(script_error_of("at 1 up colour=red\n"),
            "link.script:1: setting 'colour': expected delay, jitter, distribution, reorder, "
            "loss, burst, rate or queue");
  EXPECT_EQ(script_error_of("at 1 up\n"),
            "link.script:1: expected 'at TIME DIRECTION SETTINGS' or 'at TIME DIRECTION outage T'");
  EXPECT_EQ(script_error_of("at 1 up outage\n"),
            "link.script:1: expected 'outage T' and nothing after");
  EXPECT_EQ(script_error_of("at 0 up delay=10ms jitter=20ms\n"),
            "link.script: after 'at 0 up delay=10ms jitter=20ms': up.jitter: 0.02: allowed 0 … "
            "the delay (0.01 s)");
}

TEST(PacketScript, ParsesProbabilitiesAndSizesInTheirUnits) {
  EXPECT_DOUBLE_EQ(parse_probability("1%"), 0.01);
  EXPECT_DOUBLE_EQ(parse_probability("0.01"), 0.01);
  EXPECT_DOUBLE_EQ(parse_probability("100%"), 1.0);
  EXPECT_THROW(parse_probability("1.5"), std::invalid_argument);
  EXPECT_THROW(parse_probability("1‰"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(parse_bytes("64kB"), 64000.0);
  EXPECT_DOUBLE_EQ(parse_bytes("1500"), 1500.0);
  EXPECT_DOUBLE_EQ(parse_bytes("1500B"), 1500.0);
  EXPECT_DOUBLE_EQ(parse_bytes("2MB"), 2e6);
  EXPECT_THROW(parse_bytes("-1kB"), std::invalid_argument);
}

}  // namespace
}  // namespace tether::linkem
