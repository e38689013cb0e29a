#include "tether/linkem/link_script.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "script_events.h"

namespace tether::linkem {

namespace {

double number_with_unit(std::string_view text, std::string_view& unit) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || !std::isfinite(value)) {
    throw std::invalid_argument("'" + std::string(text) + "': not a number");
  }
  unit = text.substr(static_cast<std::size_t>(end - text.data()));
  return value;
}

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

double parse_time(std::string_view text) {
  std::string_view unit;
  double value = number_with_unit(text, unit);
  if (unit == "ms") {
    value *= 1e-3;
  } else if (unit == "us") {
    value *= 1e-6;
  } else if (!unit.empty() && unit != "s") {
    throw std::invalid_argument("'" + std::string(text) + "': expected a time in s, ms or us");
  }
  if (value < 0.0 || value > 1e6) {
    throw std::invalid_argument("'" + std::string(text) + "': allowed 0 … 1000000 s");
  }
  return value;
}

double parse_bandwidth(std::string_view text) {
  std::string_view unit;
  const double value = number_with_unit(text, unit);
  double scale = 0.0;
  if (unit == "B/s") scale = 1.0;
  if (unit == "kB/s") scale = 1e3;
  if (unit == "MB/s") scale = 1e6;
  if (unit == "kbit/s") scale = 1e3 / 8.0;
  if (unit == "Mbit/s") scale = 1e6 / 8.0;
  if (scale == 0.0) {
    throw std::invalid_argument("'" + std::string(text) +
                                "': expected a rate in B/s, kB/s, MB/s, kbit/s or Mbit/s");
  }
  if (value < 0.0) throw std::invalid_argument("'" + std::string(text) + "': must be ≥ 0");
  return value * scale;
}

std::vector<ScriptEvent> parse_link_script(std::string_view text, const std::string& name) {
  std::vector<ScriptEvent> events;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    const std::string where = name + ":" + std::to_string(number) + ": ";
    try {
      if (w.size() < 3 || w[0] != "at") {
        throw std::invalid_argument("expected 'at TIME DIRECTION SETTINGS' or 'at TIME cut'");
      }
      ScriptEvent event;
      event.time = parse_time(w[1]);
      event.text = std::string(line);
      if (w[2] == "cut") {
        if (w.size() != 3) throw std::invalid_argument("'cut' takes nothing after it");
        const double t = event.time;
        event.apply = [t](LinkProfile& p) { p.cuts.push_back(t); };
        events.push_back(std::move(event));
        continue;
      }
      if (w[2] != "up" && w[2] != "down" && w[2] != "both") {
        throw std::invalid_argument("direction '" + w[2] + "': expected up, down, both or cut");
      }
      const bool up = w[2] != "down";
      const bool down = w[2] != "up";
      if (w.size() == 5 && w[3] == "stall") {
        const Window window{event.time, event.time + parse_time(w[4])};
        if (window.end <= window.start) throw std::invalid_argument("a stall lasts > 0 s");
        event.apply = [window, up, down](LinkProfile& p) {
          if (up) p.up.stalls.push_back(window);
          if (down) p.down.stalls.push_back(window);
        };
        events.push_back(std::move(event));
        continue;
      }
      // key=value settings, applied together.
      std::vector<std::function<void(DirectionProfile&)>> settings;
      for (std::size_t i = 3; i < w.size(); ++i) {
        const std::size_t eq = w[i].find('=');
        if (eq == std::string::npos) {
          throw std::invalid_argument("'" + w[i] + "': expected KEY=VALUE or 'stall T'");
        }
        const std::string key = w[i].substr(0, eq);
        const std::string value = w[i].substr(eq + 1);
        if (key == "delay") {
          const double v = parse_time(value);
          settings.emplace_back([v](DirectionProfile& d) { d.delay = v; });
        } else if (key == "jitter") {
          const double v = parse_time(value);
          settings.emplace_back([v](DirectionProfile& d) { d.jitter = v; });
        } else if (key == "bandwidth") {
          const double v = parse_bandwidth(value);
          settings.emplace_back([v](DirectionProfile& d) { d.bandwidth = v; });
        } else if (key == "distribution") {
          if (value != "uniform" && value != "normal") {
            throw std::invalid_argument("distribution '" + value + "': expected uniform or normal");
          }
          const Jitter j = value == "uniform" ? Jitter::kUniform : Jitter::kNormal;
          settings.emplace_back([j](DirectionProfile& d) { d.distribution = j; });
        } else {
          throw std::invalid_argument("setting '" + key +
                                      "': expected delay, jitter, distribution or bandwidth");
        }
      }
      if (settings.empty()) throw std::invalid_argument("no setting after the direction");
      event.apply = [settings, up, down](LinkProfile& p) {
        for (const auto& set : settings) {
          if (up) set(p.up);
          if (down) set(p.down);
        }
      };
      events.push_back(std::move(event));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + e.what());
    }
  }
  // The whole script must give valid profiles, checked before anything is played.
  detail::order_and_check(events, LinkProfile{}, name,
                          [](const auto& profile) { validate(profile); });
  return events;
}

void play_link_script(LinkEmulator& emulator, const std::vector<ScriptEvent>& events,
                      const std::function<bool()>& stop) {
  detail::play(emulator, events, stop);
}

}  // namespace tether::linkem
