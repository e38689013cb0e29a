#pragma once

// A link's profile changing over time, as a script the emulator plays on its own clock:
//
//   # at TIME  DIRECTION  SETTINGS        (DIRECTION: up, down or both)
//   at 0      both  delay=250ms jitter=25ms distribution=uniform
//   at 5s     down  bandwidth=100kB/s
//   at 8s     up    stall 2s            (nothing leaves up for 2 s)
//   at 12s    cut                       (every open connection is reset)
//
// Times take s (default), ms or us; bandwidth B/s, kB/s, MB/s, kbit/s or Mbit/s (k = 1000).
// A setting not named keeps its value. Lines are applied in time order.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tether/linkem/link_emulator.h"

namespace tether::linkem {

struct ScriptEvent {
  double time = 0.0;  // [s] on the emulator's clock
  std::function<void(LinkProfile&)> apply;
  std::string text;  // the line, for logs
};

// Parses a script; throws std::invalid_argument "NAME:LINE: ..." naming the token and what
// is allowed.
std::vector<ScriptEvent> parse_link_script(std::string_view text, const std::string& name);

// Plays `events` on `emulator` from a thread of its own until done or `stop` is set.
void play_link_script(LinkEmulator& emulator, const std::vector<ScriptEvent>& events,
                      const std::function<bool()>& stop);

// "250ms", "2.5s", "100us", "3" (s): seconds in [0, 1e6]; throws std::invalid_argument.
double parse_time(std::string_view text);
// "100kB/s", "2Mbit/s", "5000B/s": bytes per second ≥ 0; throws std::invalid_argument.
double parse_bandwidth(std::string_view text);

}  // namespace tether::linkem
