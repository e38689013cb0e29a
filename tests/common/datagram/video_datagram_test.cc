// The camera views' datagrams: frames cut into fragments with a parity fragment a group,
// reassembled in any order, one lost fragment a group rebuilt, a lost frame counted and a key
// frame asked for.

#include "tether/datagram/video_datagram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

namespace tether::datagram {
namespace {

std::vector<std::uint8_t> frame_of(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> out(size);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

std::vector<VideoFragment> parsed(const std::vector<std::vector<std::uint8_t>>& payloads) {
  std::vector<VideoFragment> out(payloads.size());
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    EXPECT_EQ(decode(payloads[i], out[i]), "");
  }
  return out;
}

TEST(VideoDatagram, AFrameInShuffledFragmentsComesOutWholeOnce) {
  const std::vector<std::uint8_t> frame = frame_of(10 * kVideoChunk + 17, 1);
  const auto payloads = fragment_frame(frame, 0, true, 123456789);
  ASSERT_EQ(payloads.size(), 11u + 2u);  // 11 data fragments, 2 groups' parity
  for (const auto& p : payloads) EXPECT_LE(p.size() + kHeaderBytes + kTagBytes, kMaxVideoDatagram);
  std::vector<VideoFragment> fragments = parsed(payloads);
  std::mt19937_64 rng(20261128);
  std::shuffle(fragments.begin(), fragments.end(), rng);
  FrameAssembler assembler;
  int whole = 0;
  for (const VideoFragment& f : fragments) {
    if (auto done = assembler.take(f)) {
      ++whole;
      EXPECT_EQ(done->data, frame);
      EXPECT_TRUE(done->key);
      EXPECT_EQ(done->capture_ns, 123456789);
    }
  }
  EXPECT_EQ(whole, 1);
  EXPECT_EQ(assembler.completed(), 1u);
  EXPECT_FALSE(assembler.key_wanted());
}

TEST(VideoDatagram, OneLostFragmentAGroupIsRebuiltFromTheParity) {
  const std::vector<std::uint8_t> frame = frame_of(12 * kVideoChunk + 5, 2);
  const auto payloads = fragment_frame(frame, 0, true, 1);  // 13 data fragments, 2 parity
  std::vector<VideoFragment> fragments = parsed(payloads);
  // Drop the 3rd data fragment of the first group and the last (short) one of the second.
  fragments.erase(fragments.begin() + 13);  // d12, after d0…d7, the parity, d8…d11
  fragments.erase(fragments.begin() + 2);
  FrameAssembler assembler;
  std::optional<AssembledFrame> done;
  for (const VideoFragment& f : fragments) {
    if (auto d = assembler.take(f)) done = std::move(d);
  }
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->data, frame);
  EXPECT_EQ(assembler.repaired(), 2u);
  EXPECT_EQ(assembler.lost(), 0u);
}

TEST(VideoDatagram, TwoLostInAGroupLoseTheFrameAndAskForAKeyFrame) {
  FrameAssembler assembler;
  const auto first = frame_of(3 * kVideoChunk, 3);
  const auto first_payloads = fragment_frame(first, 0, true, 1);
  for (const VideoFragment& f : parsed(first_payloads)) assembler.take(f);
  EXPECT_FALSE(assembler.key_wanted());
  const auto second_payloads = fragment_frame(frame_of(3 * kVideoChunk, 4), 1, false, 2);
  std::vector<VideoFragment> second = parsed(second_payloads);
  second.erase(second.begin(), second.begin() + 2);  // two of its three data fragments
  for (const VideoFragment& f : second) EXPECT_FALSE(assembler.take(f).has_value());
  const auto third = frame_of(2 * kVideoChunk, 5);
  std::optional<AssembledFrame> done;
  const auto third_payloads = fragment_frame(third, 2, false, 3);
  for (const VideoFragment& f : parsed(third_payloads)) {
    if (auto d = assembler.take(f)) done = std::move(d);
  }
  ASSERT_TRUE(done.has_value());  // delivered; the receiver decides what it can decode
  EXPECT_EQ(assembler.lost(), 1u);
  EXPECT_TRUE(assembler.key_wanted());
  // A late fragment of the lost frame changes nothing.
  EXPECT_FALSE(assembler.take(second.front()).has_value());
  // The key frame asked for settles it.
  const auto key_payloads = fragment_frame(first, 3, true, 4);
  for (const VideoFragment& f : parsed(key_payloads)) assembler.take(f);
  EXPECT_FALSE(assembler.key_wanted());
  EXPECT_EQ(assembler.completed(), 3u);
}

TEST(VideoDatagram, MalformedFragmentsAndFeedbackAreRefusedWithTheReason) {
  const auto payloads = fragment_frame(frame_of(2000, 6), 0, false, 0);
  VideoFragment f;
  std::vector<std::uint8_t> bad = payloads[0];
  bad.pop_back();
  EXPECT_EQ(decode(bad, f), "video fragment: length does not match its place");
  bad = payloads[0];
  bad[0] = 8;
  EXPECT_EQ(decode(bad, f), "video fragment: unknown flags");
  bad = payloads[0];
  bad[7] = 9;  // count
  EXPECT_EQ(decode(bad, f), "video fragment: count does not match the frame's size");
  bad = payloads[0];
  bad[17] = 0;
  bad[18] = 0;
  bad[19] = 0;
  bad[20] = 0;
  EXPECT_EQ(decode(bad, f), "video fragment: frame size 0 outside [1, 4194304]");
  EXPECT_TRUE(fragment_frame({}, 0, false, 0).empty());

  VideoFeedback m;
  m.key_wanted = true;
  m.newest_frame = 42;
  m.ground_time_ns = -5;
  m.completed = 40;
  m.lost = 2;
  std::array<std::uint8_t, kVideoFeedbackBytes> wire{};
  ASSERT_EQ(encode(m, wire), kVideoFeedbackBytes);
  VideoFeedback back;
  EXPECT_EQ(decode(wire, back), "");
  EXPECT_TRUE(back.key_wanted);
  EXPECT_EQ(back.newest_frame, 42u);
  EXPECT_EQ(back.ground_time_ns, -5);
  EXPECT_EQ(back.lost, 2u);
  EXPECT_EQ(decode(std::span(wire.data(), 20), back), "video feedback: wrong length");
}

TEST(VideoDatagram, TheCamerasPoseAtCaptureRidesWithEveryFragment) {
  CameraPose pose;
  pose.known = true;
  pose.p = {0.25F, -1.5F, 0.75F};
  pose.q = {0.5F, -0.5F, 0.5F, -0.5F};
  const auto payloads = fragment_frame(frame_of(9 * kVideoChunk, 8), 3, true, 5, pose);
  std::vector<VideoFragment> fragments = parsed(payloads);
  for (const VideoFragment& f : fragments) EXPECT_EQ(f.pose, pose);
  // Whichever fragment opens the frame, the whole frame has the pose.
  std::reverse(fragments.begin(), fragments.end());
  FrameAssembler assembler;
  std::optional<AssembledFrame> done;
  for (const VideoFragment& f : fragments) {
    if (auto d = assembler.take(f)) done = std::move(d);
  }
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->pose, pose);
  // A camera whose pose is not known says so.
  const auto unknown = parsed(fragment_frame(frame_of(100, 9), 4, true, 6));
  EXPECT_FALSE(unknown.front().pose.known);
}

TEST(VideoDatagram, APoseOutOfRangeIsRefusedNamingTheFieldAndTheRange) {
  CameraPose pose;
  pose.known = true;
  pose.q = {0.9F, 0.0F, 0.0F, 0.0F};
  auto payloads = fragment_frame(frame_of(100, 10), 0, true, 0, pose);
  VideoFragment f;
  EXPECT_EQ(decode(payloads[0], f),
            "video fragment: pose |q| = 0.900000: a unit quaternion within 1e-3");
  pose.q = {1.0F, 0.0F, 0.0F, 0.0F};
  pose.p = {0.0F, 2000.0F, 0.0F};
  payloads = fragment_frame(frame_of(100, 10), 0, true, 0, pose);
  EXPECT_EQ(decode(payloads[0], f), "video fragment: pose p[1] = 2000.000000 m: within ±1000 m");
  pose.p = {std::numeric_limits<float>::quiet_NaN(), 0.0F, 0.0F};
  payloads = fragment_frame(frame_of(100, 10), 0, true, 0, pose);
  EXPECT_NE(decode(payloads[0], f).find("pose p[0] = nan m"), std::string::npos);
}

// Sealed as the plane seals them: a video datagram may be up to 1232 bytes, an increment
// still no more than 512.
TEST(VideoDatagram, VideoDatagramsHaveTheirOwnSizeLimit) {
  const SessionKeys keys = make_session_keys();
  Sealer sealer(Kind::kVideo, keys.session, keys.remote_to_ground);
  Opener opener(Kind::kVideo, keys.session, keys.remote_to_ground);
  const auto payloads = fragment_frame(frame_of(kVideoChunk, 7), 0, true, 0);
  std::array<std::uint8_t, kMaxVideoDatagram> sealed{};
  const std::size_t n = sealer.seal(payloads[0], sealed);
  ASSERT_EQ(n, kMaxVideoDatagram);
  std::array<std::uint8_t, kMaxVideoDatagram> plain{};
  EXPECT_EQ(opener.open(std::span(sealed.data(), n), plain), payloads[0].size());
  Sealer increments(Kind::kIncrement, keys.session, keys.ground_to_remote);
  EXPECT_EQ(increments.seal(payloads[0], sealed), 0u);
}

}  // namespace
}  // namespace tether::datagram
