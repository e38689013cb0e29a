#include "tether/local/hand_controller/keyboard.h"

#include <algorithm>
#include <cctype>

#include "config_check.h"
#include "fd_reader.h"

namespace tether::local {

namespace {

// Axis (twist rows 0-5, ψ row 6) and direction of a motion key; axis −1 if none.
struct KeyAxis {
  int axis = -1;
  double sign = 0.0;
};

KeyAxis key_axis(unsigned char key) {
  switch (std::tolower(key)) {
    case 'w':
      return {0, 1.0};
    case 's':
      return {0, -1.0};
    case 'a':
      return {1, 1.0};
    case 'd':
      return {1, -1.0};
    case 'r':
      return {2, 1.0};
    case 'f':
      return {2, -1.0};
    case 'i':
      return {3, 1.0};
    case 'k':
      return {3, -1.0};
    case 'j':
      return {4, 1.0};
    case 'l':
      return {4, -1.0};
    case 'u':
      return {5, 1.0};
    case 'o':
      return {5, -1.0};
    case ']':
      return {6, 1.0};
    case '[':
      return {6, -1.0};
    default:
      return {};
  }
}

}  // namespace

void validate(const KeyboardConfig& config) {
  detail::require_range("keyboard.linear_rate", config.linear_rate, 1e-9, 1.0);
  detail::require_range("keyboard.angular_rate", config.angular_rate, 1e-9, 10.0);
  detail::require_range("keyboard.arm_angle_rate", config.arm_angle_rate, 1e-9, 10.0);
  detail::require_range("keyboard.key_hold", config.key_hold, 1e-3, 5.0);
}

KeyboardHandController::KeyboardHandController(asio::io_context& io, int fd,
                                               const KeyboardConfig& config, bool owns_fd)
    : config_(config) {
  // A descriptor handed over is closed even if the configuration is refused.
  reader_ = std::make_unique<detail::FdReader>(io, fd, owns_fd);
  validate(config_);
  until_.fill(-kNever);
  sign_.fill(0.0);
  if (::isatty(fd) && ::tcgetattr(fd, &saved_terminal_) == 0) {
    termios raw = saved_terminal_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    // VMIN 1: with VMIN 0 and VTIME 0 Linux answers an empty read with 0 bytes — end of
    // file — instead of EAGAIN; the descriptor is non-blocking anyway.
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    restore_terminal_ = ::tcsetattr(fd, TCSANOW, &raw) == 0;
  }
}

KeyboardHandController::~KeyboardHandController() {
  if (restore_terminal_) ::tcsetattr(reader_->fd(), TCSANOW, &saved_terminal_);
}

std::string KeyboardHandController::describe() const {
  return "keyboard on fd " + std::to_string(reader_->fd()) +
         (restore_terminal_ ? " (terminal)" : "");
}

RateCommand KeyboardHandController::command_at(double t) const {
  RateCommand command;
  command.handle_axes = config_.handle_axes;
  for (int i = 0; i < 6; ++i) {
    if (t < until_[i]) {
      command.twist[i] = sign_[i] * (i < 3 ? config_.linear_rate : config_.angular_rate);
    }
  }
  if (t < until_[6]) command.arm_angle_rate = sign_[6] * config_.arm_angle_rate;
  return command;
}

double KeyboardHandController::next_change_after(double t) const {
  double next = kNever;
  for (const double until : until_) {
    if (until > t) next = std::min(next, until);
  }
  return next;
}

void KeyboardHandController::press(unsigned char key, double now, DeviceSample& out) {
  // Escape sequences: ESC, then '[' or 'O', then parameters up to a final byte 0x40-0x7E.
  if (escape_state_ == 1) {
    escape_state_ = (key == '[' || key == 'O') ? 2 : 0;
    return;
  }
  if (escape_state_ == 2) {
    if (key >= 0x40 && key <= 0x7E) escape_state_ = 0;
    return;
  }
  if (key == 0x1B) {
    escape_state_ = 1;
    return;
  }
  const KeyAxis axis = key_axis(key);
  if (axis.axis >= 0) {
    until_[axis.axis] = now + config_.key_hold;
    sign_[axis.axis] = axis.sign;
    return;
  }
  switch (std::tolower(key)) {
    case ' ':
      deadman_ = !deadman_;
      break;
    case 'c':
      clutch_ = !clutch_;
      break;
    case '+':
    case '=':
      ++out.scale_steps;
      break;
    case '-':
    case '_':
      --out.scale_steps;
      break;
    case 'x':
    case '\r':
    case '\n':
      until_.fill(-kNever);
      break;
    default:
      break;
  }
}

void KeyboardHandController::poll(double now, DeviceSample& out) {
  std::array<unsigned char, 64> bytes{};
  std::size_t n = 0;
  while ((n = reader_->read_available(bytes.data(), bytes.size())) > 0) {
    for (std::size_t i = 0; i < n; ++i) press(bytes[i], now, out);
    if (n < bytes.size()) break;
  }
  out.deadman = deadman_;
  out.clutch = clutch_;
  out.valid = !reader_->lost();
}

}  // namespace tether::local
