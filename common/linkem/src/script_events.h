#pragma once

// What both link scripts (the byte-stream one, link_script.h, and the packet one,
// packet_link.h) do with their parsed events alike: order them by time, check that every
// profile they lead to is valid before anything is played, and play them on an emulator's
// own clock. Private to tether::linkem.

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tether::linkem::detail {

// Sorts `events` by time (stable: lines at one time keep their order) and applies them in
// turn to `start`, checking each profile with `check`; throws std::invalid_argument
// "NAME: after 'LINE': ..." for the first that is not valid.
template <typename Event, typename Profile, typename Check>
void order_and_check(std::vector<Event>& events, Profile start, const std::string& name,
                     const Check& check) {
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.time < b.time; });
  for (const Event& event : events) {
    event.apply(start);
    try {
      check(start);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(name + ": after '" + event.text + "': " + e.what());
    }
  }
}

// Plays `events` on `emulator` (now(), profile(), set_profile()) at their times, until done
// or `stop` says so.
template <typename Event, typename Emulator>
void play(Emulator& emulator, const std::vector<Event>& events, const std::function<bool()>& stop) {
  for (const Event& event : events) {
    while (emulator.now() < event.time) {
      if (stop && stop()) return;
      const double left = event.time - emulator.now();
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.05)));
    }
    auto profile = emulator.profile();
    event.apply(profile);
    emulator.set_profile(profile);
  }
}

}  // namespace tether::linkem::detail
