#pragma once

// Keyboard hand controller: a terminal in raw mode commands handle rates.
//
// Key map (letters in either case):
//   w / s   +x / −x        i / k   +ωx / −ωx
//   a / d   +y / −y        j / l   +ωy / −ωy
//   r / f   +z / −z        u / o   +ωz / −ωz
//   ] / [   arm angle ψ + / −
//   space   deadman toggle (starts released)
//   c       clutch toggle (starts disengaged)
//   + (=) / - (_)  scale up / down one step
//   x, Enter       stop every rate at once
// A terminal reports presses, not releases: a key drives its axis at the full rate for
// `key_hold` seconds after the press (the keyboard's auto-repeat keeps a held key alive),
// a later opposite key on the same axis takes over at once. Escape sequences (arrow and
// function keys) are skipped whole. Ctrl-C still raises SIGINT: only canonical mode and echo
// are switched off, and the terminal settings are restored on destruction.
// Rates are in HB axes unless `handle_axes`; linear first as everywhere.

#include <termios.h>
#include <unistd.h>

#include <array>
#include <memory>

#include "tether/local/hand_controller/rate_device.h"

namespace asio {
class io_context;
}

namespace tether::local {

namespace detail {
class FdReader;
}

struct KeyboardConfig {
  double linear_rate = 0.05;    // [m/s] per key, in (0, 1]
  double angular_rate = 0.5;    // [rad/s] per key, in (0, 10]
  double arm_angle_rate = 0.3;  // [rad/s] per key, in (0, 10]
  double key_hold = 0.55;       // [s] a press lasts this long, in (0, 5]; > auto-repeat delay
  bool handle_axes = false;     // keys command HH axes instead of HB axes
};

// Throws std::invalid_argument naming the field, the value and the allowed range.
void validate(const KeyboardConfig& config);

class KeyboardHandController final : public RateHandController {
 public:
  // Reads `fd` (stdin by default), which stays open unless `owns_fd`. A terminal is put in
  // non-canonical no-echo mode for the lifetime of this object; a pipe is read as it is.
  explicit KeyboardHandController(asio::io_context& io, int fd = STDIN_FILENO,
                                  const KeyboardConfig& config = {}, bool owns_fd = false);
  ~KeyboardHandController() override;

  std::string describe() const override;

 protected:
  RateCommand command_at(double t) const override;
  double next_change_after(double t) const override;
  void poll(double now, DeviceSample& out) override;

 private:
  void press(unsigned char key, double now, DeviceSample& out);

  KeyboardConfig config_;
  std::unique_ptr<detail::FdReader> reader_;
  bool restore_terminal_ = false;
  termios saved_terminal_{};
  std::array<double, 7> until_{};  // per axis (twist rows, then ψ): the held key's expiry [s]
  std::array<double, 7> sign_{};   // ±1 of the held key
  bool deadman_ = false;
  bool clutch_ = false;
  int escape_state_ = 0;  // 0 none, 1 after ESC, 2 inside a CSI/SS3 sequence
};

}  // namespace tether::local
