#include "tether/local/hand_controller/script.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <stdexcept>

namespace tether::local {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

class LineError {
 public:
  LineError(const std::string& name, int line) : where_(name + ":" + std::to_string(line)) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(where_ + ": " + what);
  }

 private:
  std::string where_;
};

double parse_number(const std::string& token, const char* field, const LineError& error) {
  double value = 0.0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(value)) {
    error.fail(std::string("bad token '") + token + "' for " + field +
               ": expected a finite number");
  }
  return value;
}

bool parse_switch(const std::string& token, const char* field, const LineError& error) {
  if (token == "0") return false;
  if (token == "1") return true;
  error.fail(std::string("bad token '") + token + "' for " + field + ": expected 0 or 1");
}

}  // namespace

HandScript HandScript::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open hand-controller script");
  return parse(in, path);
}

HandScript HandScript::parse(std::istream& in, const std::string& name) {
  HandScript script;
  script.name_ = name;
  script.end_time_ = kInfinity;
  double angle_unit = 1.0;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const LineError error(name, line);
    if (const auto hash = text.find('#'); hash != std::string::npos) text.erase(hash);
    std::istringstream fields(text);
    std::vector<std::string> tokens;
    for (std::string token; fields >> token;) tokens.push_back(token);
    if (tokens.empty()) continue;
    if (script.end_time_ < kInfinity) error.fail("bad token '" + tokens[0] + "': after `end`");
    if (tokens[0] == "units") {
      if (!script.segments_.empty()) error.fail("bad token 'units': must precede the commands");
      if (tokens.size() != 2 || (tokens[1] != "deg" && tokens[1] != "rad")) {
        error.fail("bad token '" + (tokens.size() > 1 ? tokens[1] : std::string()) +
                   "' for units: expected `units deg` or `units rad`");
      }
      angle_unit = tokens[1] == "deg" ? std::numbers::pi / 180.0 : 1.0;
      continue;
    }
    const double start = parse_number(tokens[0], "t_s", error);
    const double previous = script.segments_.empty() ? -kInfinity : script.segments_.back().start;
    if (start < 0.0 || start <= previous) {
      error.fail("bad token '" + tokens[0] +
                 "' for t_s: times must be >= 0 and strictly increasing");
    }
    if (tokens.size() == 2 && tokens[1] == "end") {
      script.end_time_ = start;
      continue;
    }
    if (tokens.size() != 11) {
      error.fail(
          "expected 11 fields `t_s frame vx vy vz wx wy wz psi_rate deadman clutch` or "
          "`t_s end`, got " +
          std::to_string(tokens.size()));
    }
    ScriptSegment segment;
    segment.start = start;
    if (tokens[1] == "handle") {
      segment.command.handle_axes = true;
    } else if (tokens[1] != "base") {
      error.fail("bad token '" + tokens[1] + "' for frame: expected handle or base");
    }
    static constexpr const char* kRateNames[] = {"vx", "vy", "vz", "wx", "wy", "wz"};
    for (int i = 0; i < 6; ++i) {
      segment.command.twist[i] =
          parse_number(tokens[2 + i], kRateNames[i], error) * (i < 3 ? 1.0 : angle_unit);
    }
    segment.command.arm_angle_rate = parse_number(tokens[8], "psi_rate", error) * angle_unit;
    segment.deadman = parse_switch(tokens[9], "deadman", error);
    segment.clutch = parse_switch(tokens[10], "clutch", error);
    script.segments_.push_back(segment);
  }
  if (script.segments_.empty()) {
    throw std::runtime_error(name + ": no command lines in hand-controller script");
  }
  return script;
}

const ScriptSegment* HandScript::segment_at(double t) const noexcept {
  if (t >= end_time_) return nullptr;
  const auto after =
      std::upper_bound(segments_.begin(), segments_.end(), t,
                       [](double time, const ScriptSegment& s) { return time < s.start; });
  return after == segments_.begin() ? nullptr : &*std::prev(after);
}

double HandScript::next_change_after(double t) const noexcept {
  const auto after =
      std::upper_bound(segments_.begin(), segments_.end(), t,
                       [](double time, const ScriptSegment& s) { return time < s.start; });
  const double next = after == segments_.end() ? kInfinity : after->start;
  return end_time_ > t ? std::min(next, end_time_) : next;
}

double HandScript::arm_angle_change(double t0, double t1) const noexcept {
  double change = 0.0;
  for (double t = t0; t < t1;) {
    const double next = std::min(next_change_after(t), t1);
    if (const ScriptSegment* segment = segment_at(t)) {
      change += segment->command.arm_angle_rate * (next - t);
    }
    t = next;
  }
  return change;
}

ScriptedHandController::ScriptedHandController(HandScript script) : script_(std::move(script)) {}

RateCommand ScriptedHandController::command_at(double t) const {
  const ScriptSegment* segment = script_.segment_at(t - origin_);
  return segment ? segment->command : RateCommand{};
}

double ScriptedHandController::next_change_after(double t) const {
  return script_.next_change_after(t - origin_) + origin_;
}

void ScriptedHandController::poll(double now, DeviceSample& out) {
  if (!started_) {
    started_ = true;
    origin_ = now;
  }
  const double t = now - origin_;
  const ScriptSegment* segment = script_.segment_at(t);
  out.deadman = segment && segment->deadman;
  out.clutch = segment && segment->clutch;
  out.valid = t < script_.end_time();
}

}  // namespace tether::local
