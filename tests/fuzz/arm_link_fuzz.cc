// The arm link's datagram decoder, both packet kinds, as the controller and the arm process
// receive them from the network: any bytes must decode or be refused with a reason, without
// a crash or a sanitizer report; a decoded packet holds only finite numbers. Random bytes
// never carry a valid MAC, so each input is also decoded re-sealed (the expected ids and a
// valid MAC written over its own), which lets the fuzzer reach the payload checks.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "tether/remote/arm_link/protocol.h"

using namespace tether::remote::arm_link;

namespace {

void require_finite(double v) {
  if (!std::isfinite(v)) std::abort();
}

const LinkKey& fuzz_key() {
  static const LinkKey key = [] {
    constexpr std::string_view kSecret = "arm link fuzz secret, 32 bytes!!";
    const LinkSecret secret =
        make_link_secret(std::span<const std::uint8_t>(
                             reinterpret_cast<const std::uint8_t*>(kSecret.data()), kSecret.size()),
                         "fuzz");
    return derive_session_key(secret, 1, 2);
  }();
  return key;
}

void decode_both(std::span<const std::uint8_t> datagram, const LinkIds& ids) {
  StatePacket state;
  if (decode(datagram, ids, fuzz_key(), state) == DecodeError::kNone) {
    for (int i = 0; i < 7; ++i) require_finite(state.state.position[i]);
    for (int i = 0; i < 6; ++i) require_finite(state.state.wrench[i]);
  }
  CommandPacket command;
  if (decode(datagram, ids, fuzz_key(), command) == DecodeError::kNone) {
    require_finite(command.controller_time);
    for (int i = 0; i < 7; ++i) require_finite(command.command.position[i]);
  }
}

void put_u64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const LinkIds ids{1, 2};
  const std::span<const std::uint8_t> datagram(data, size);
  LinkIds peeked;
  (void)peek_session(datagram, PacketKind::kState, peeked);
  (void)peek_session(datagram, PacketKind::kCommand, peeked);
  decode_both(datagram, ids);
  if (size >= kHeaderSize + kMacSize && size <= kMaxPacketSize) {
    PacketBuffer b{};
    std::copy(data, data + size, b.begin());
    put_u64(b.data() + kSessionOffset, ids.session);
    put_u64(b.data() + kArmModelOffset, ids.arm_model);
    const Mac mac =
        compute_mac(std::span<const std::uint8_t>(b.data(), size - kMacSize), fuzz_key());
    std::copy(mac.begin(), mac.end(), b.begin() + static_cast<std::ptrdiff_t>(size - kMacSize));
    decode_both(std::span<const std::uint8_t>(b.data(), size), ids);
  }
  return 0;
}
