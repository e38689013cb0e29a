#include "tether/datagram/video_datagram.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tether::datagram {

namespace {

template <typename T>
void put(std::uint8_t* out, T v) {
  std::memcpy(out, &v, sizeof v);  // little-endian hosts (x86-64, aarch64)
}
template <typename T>
T get(const std::uint8_t* in) {
  T v{};
  std::memcpy(&v, in, sizeof v);
  return v;
}

}  // namespace

namespace {

// A pose a camera can have: within a kilometre of the base, its orientation a unit quaternion.
std::string check_pose(const CameraPose& pose) {
  constexpr double kMaxDistance = 1000.0;  // [m]
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(std::abs(pose.p[i]) <= kMaxDistance)) {
      return "video fragment: pose p[" + std::to_string(i) + "] = " + std::to_string(pose.p[i]) +
             " m: within ±" + std::to_string(static_cast<int>(kMaxDistance)) + " m";
    }
  }
  double norm2 = 0.0;
  for (const float c : pose.q) norm2 += double{c} * c;
  if (!(std::abs(std::sqrt(norm2) - 1.0) <= 1e-3)) {
    return "video fragment: pose |q| = " + std::to_string(std::sqrt(norm2)) +
           ": a unit quaternion within 1e-3";
  }
  return {};
}

std::size_t fragment_length(std::size_t frame_bytes, std::size_t index) {
  return std::min(kVideoChunk, frame_bytes - index * kVideoChunk);
}

std::vector<std::uint8_t> header(bool key, bool parity, std::uint32_t number, std::size_t index,
                                 std::size_t count, std::int64_t capture_ns, const CameraPose& pose,
                                 std::size_t frame_bytes, std::size_t length) {
  std::vector<std::uint8_t> p(kVideoFragmentHeader + length);
  p[0] = static_cast<std::uint8_t>((key ? 1U : 0U) | (parity ? 2U : 0U) | (pose.known ? 4U : 0U));
  put<std::uint32_t>(&p[1], number);
  put<std::uint16_t>(&p[5], static_cast<std::uint16_t>(index));
  put<std::uint16_t>(&p[7], static_cast<std::uint16_t>(count));
  put<std::int64_t>(&p[9], capture_ns);
  put<std::uint32_t>(&p[17], static_cast<std::uint32_t>(frame_bytes));
  if (pose.known) {
    for (std::size_t i = 0; i < 3; ++i) put<float>(&p[21 + 4 * i], pose.p[i]);
    for (std::size_t i = 0; i < 4; ++i) put<float>(&p[33 + 4 * i], pose.q[i]);
  }
  return p;
}

}  // namespace

std::vector<std::vector<std::uint8_t>> fragment_frame(std::span<const std::uint8_t> frame,
                                                      std::uint32_t number, bool key,
                                                      std::int64_t capture_ns,
                                                      const CameraPose& pose) {
  std::vector<std::vector<std::uint8_t>> out;
  if (frame.empty() || frame.size() > kMaxVideoFrame) return out;
  const std::size_t count = (frame.size() + kVideoChunk - 1) / kVideoChunk;
  for (std::size_t group = 0; group * kParityGroup < count; ++group) {
    const std::size_t first = group * kParityGroup;
    const std::size_t last = std::min(count, first + kParityGroup);
    std::vector<std::uint8_t> parity = header(key, true, number, group, count, capture_ns, pose,
                                              frame.size(), fragment_length(frame.size(), first));
    for (std::size_t i = first; i < last; ++i) {
      const std::size_t length = fragment_length(frame.size(), i);
      std::vector<std::uint8_t> p =
          header(key, false, number, i, count, capture_ns, pose, frame.size(), length);
      const std::uint8_t* bytes = frame.data() + i * kVideoChunk;
      std::memcpy(p.data() + kVideoFragmentHeader, bytes, length);
      for (std::size_t k = 0; k < length; ++k) parity[kVideoFragmentHeader + k] ^= bytes[k];
      out.push_back(std::move(p));
    }
    out.push_back(std::move(parity));
  }
  return out;
}

std::string decode(std::span<const std::uint8_t> bytes, VideoFragment& out) {
  if (bytes.size() < kVideoFragmentHeader + 1) return "video fragment: shorter than its header";
  if (bytes.size() > kVideoFragmentHeader + kVideoChunk) return "video fragment: too long";
  if ((bytes[0] & ~7U) != 0) return "video fragment: unknown flags";
  out.key = (bytes[0] & 1U) != 0;
  out.parity = (bytes[0] & 2U) != 0;
  out.frame = get<std::uint32_t>(&bytes[1]);
  out.index = get<std::uint16_t>(&bytes[5]);
  out.count = get<std::uint16_t>(&bytes[7]);
  out.capture_ns = get<std::int64_t>(&bytes[9]);
  out.frame_bytes = get<std::uint32_t>(&bytes[17]);
  out.pose = CameraPose{};
  if ((bytes[0] & 4U) != 0) {
    out.pose.known = true;
    for (std::size_t i = 0; i < 3; ++i) out.pose.p[i] = get<float>(&bytes[21 + 4 * i]);
    for (std::size_t i = 0; i < 4; ++i) out.pose.q[i] = get<float>(&bytes[33 + 4 * i]);
    if (std::string e = check_pose(out.pose); !e.empty()) return e;
  }
  out.data = bytes.subspan(kVideoFragmentHeader);
  if (out.frame_bytes == 0 || out.frame_bytes > kMaxVideoFrame) {
    return "video fragment: frame size " + std::to_string(out.frame_bytes) + " outside [1, " +
           std::to_string(kMaxVideoFrame) + "]";
  }
  const std::size_t count = (out.frame_bytes + kVideoChunk - 1) / kVideoChunk;
  if (out.count != count) return "video fragment: count does not match the frame's size";
  const std::size_t groups = (count + kParityGroup - 1) / kParityGroup;
  if (out.index >= (out.parity ? groups : count)) return "video fragment: index beyond the count";
  const std::size_t first = out.parity ? out.index * kParityGroup : out.index;
  if (out.data.size() != fragment_length(out.frame_bytes, first)) {
    return "video fragment: length does not match its place";
  }
  return {};
}

std::size_t encode(const VideoFeedback& m, std::span<std::uint8_t> out) {
  if (out.size() < kVideoFeedbackBytes) return 0;
  out[0] = m.key_wanted ? 1 : 0;
  put<std::uint32_t>(&out[1], m.newest_frame);
  put<std::int64_t>(&out[5], m.ground_time_ns);
  put<std::uint32_t>(&out[13], m.completed);
  put<std::uint32_t>(&out[17], m.lost);
  return kVideoFeedbackBytes;
}

std::string decode(std::span<const std::uint8_t> bytes, VideoFeedback& m) {
  if (bytes.size() != kVideoFeedbackBytes) return "video feedback: wrong length";
  if ((bytes[0] & ~1U) != 0) return "video feedback: unknown flags";
  m.key_wanted = (bytes[0] & 1U) != 0;
  m.newest_frame = get<std::uint32_t>(&bytes[1]);
  m.ground_time_ns = get<std::int64_t>(&bytes[5]);
  m.completed = get<std::uint32_t>(&bytes[13]);
  m.lost = get<std::uint32_t>(&bytes[17]);
  return {};
}

void FrameAssembler::repair(Partial& p, std::size_t group) {
  const std::size_t first = group * kParityGroup;
  const std::size_t last = std::min<std::size_t>(p.count, first + kParityGroup);
  if (p.parity[group].empty()) return;
  std::size_t missing = last;
  for (std::size_t i = first; i < last; ++i) {
    if (p.have[i]) continue;
    if (missing != last) return;  // two or more: beyond one parity
    missing = i;
  }
  if (missing == last) return;
  std::vector<std::uint8_t> bytes = p.parity[group];
  for (std::size_t i = first; i < last; ++i) {
    if (i == missing) continue;
    const std::size_t length = fragment_length(p.data.size(), i);
    const std::uint8_t* d = p.data.data() + i * kVideoChunk;
    for (std::size_t k = 0; k < length; ++k) bytes[k] ^= d[k];
  }
  std::memcpy(p.data.data() + missing * kVideoChunk, bytes.data(),
              fragment_length(p.data.size(), missing));
  p.have[missing] = true;
  ++p.received;
  ++repaired_;
}

std::optional<AssembledFrame> FrameAssembler::take(const VideoFragment& f) {
  if (any_ && f.frame <= newest_) return {};  // late: its frame is done or given up
  Partial& p = partial_[f.frame];
  if (p.count == 0) {
    p.count = f.count;
    p.key = f.key;
    p.capture_ns = f.capture_ns;
    p.pose = f.pose;
    p.data.resize(f.frame_bytes);
    p.have.assign(f.count, false);
    p.parity.resize((f.count + kParityGroup - 1) / kParityGroup);
  } else if (p.count != f.count || p.data.size() != f.frame_bytes) {
    ++invalid_;  // fragments of one frame that disagree: not ours to mend
    return {};
  }
  const std::size_t group = f.parity ? f.index : f.index / kParityGroup;
  if (f.parity) {
    if (!p.parity[group].empty()) return {};
    p.parity[group].assign(f.data.begin(), f.data.end());
  } else {
    if (p.have[f.index]) return {};
    p.have[f.index] = true;
    ++p.received;
    std::memcpy(p.data.data() + static_cast<std::size_t>(f.index) * kVideoChunk, f.data.data(),
                f.data.size());
  }
  if (p.received < p.count) repair(p, group);
  if (p.received < p.count) {
    // More than a few frames in the air: the oldest will not complete (the gap counts it
    // lost when a newer one does).
    while (partial_.size() > 8) {
      partial_.erase(partial_.begin());
      key_wanted_ = true;
    }
    return {};
  }
  AssembledFrame out;
  out.number = f.frame;
  out.key = p.key;
  out.capture_ns = p.capture_ns;
  out.pose = p.pose;
  out.data = std::move(p.data);
  // Older frames still incomplete will never be shown; with those of which nothing came,
  // the numbers skipped are lost.
  for (auto it = partial_.begin(); it != partial_.end() && it->first <= f.frame;) {
    it = partial_.erase(it);
  }
  const std::uint32_t missing = any_ ? f.frame - newest_ - 1 : f.frame;
  if (missing > 0) {
    lost_ += missing;
    key_wanted_ = true;
  }
  any_ = true;
  newest_ = f.frame;
  ++completed_;
  if (out.key) key_wanted_ = false;
  return out;
}

}  // namespace tether::datagram
