// The camera views' datagrams as a ground receives them from anyone on the path
// (tether/datagram/video_datagram.h):
//  - raw bytes decoded as a fragment: refused with a message, or accepted with a place in a
//    frame that the fragment's bytes fit exactly;
//  - raw bytes decoded as feedback: refused, or encoded back to the very same bytes;
//  - fragments cut from the input fed to a frame assembler in an order, with drops, the input
//    chooses: every frame delivered is one that was sent, byte for byte, delivered at most
//    once and in increasing order, and the counts never exceed what was sent.
// A violated invariant aborts.

#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <vector>

#include "tether/datagram/video_datagram.h"

namespace {

using namespace tether::datagram;

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  VideoFragment f;
  if (decode(bytes, f).empty()) {
    require(f.count >= 1 && f.frame_bytes >= 1);
    require(f.data.size() <= kVideoChunk && !f.data.empty());
    FrameAssembler one;
    one.take(f);  // a stray fragment alone never crashes the assembler
  }
  VideoFeedback m;
  if (decode(bytes, m).empty()) {
    std::array<std::uint8_t, kVideoFeedbackBytes> back{};
    require(encode(m, back) == kVideoFeedbackBytes);
    require(std::equal(back.begin(), back.end(), bytes.begin()));
  }

  FuzzedDataProvider input(data, size);
  const int frames = input.ConsumeIntegralInRange<int>(1, 6);
  std::map<std::uint32_t, std::vector<std::uint8_t>> sent;
  std::vector<std::vector<std::uint8_t>> payloads;
  for (int k = 0; k < frames; ++k) {
    const std::size_t length = input.ConsumeIntegralInRange<std::size_t>(1, 5 * kVideoChunk);
    std::vector<std::uint8_t> frame(length, static_cast<std::uint8_t>(k));
    const std::vector<std::uint8_t> fill = input.ConsumeBytes<std::uint8_t>(length);
    std::copy(fill.begin(), fill.end(), frame.begin());
    const auto number = static_cast<std::uint32_t>(k);
    for (auto& p : fragment_frame(frame, number, k == 0, k)) payloads.push_back(std::move(p));
    sent[number] = std::move(frame);
  }
  FrameAssembler assembler;
  std::int64_t last = -1;
  std::uint32_t delivered = 0;
  while (!payloads.empty() && input.remaining_bytes() > 0) {
    const std::size_t pick = input.ConsumeIntegralInRange<std::size_t>(0, payloads.size() - 1);
    const bool drop = input.ConsumeBool();
    std::vector<std::uint8_t> p = std::move(payloads[pick]);
    payloads.erase(payloads.begin() + static_cast<std::ptrdiff_t>(pick));
    if (drop) continue;
    VideoFragment fragment;
    require(decode(p, fragment).empty());
    if (auto done = assembler.take(fragment)) {
      require(static_cast<std::int64_t>(done->number) > last);
      last = done->number;
      require(done->data == sent.at(done->number));
      ++delivered;
    }
  }
  require(assembler.completed() == delivered);
  require(assembler.completed() + assembler.lost() <= static_cast<std::uint32_t>(frames));
  return 0;
}
