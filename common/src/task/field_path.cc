#include "tether/common/task/field_path.h"

#include <array>
#include <charconv>
#include <stdexcept>
#include <utility>

namespace tether {
namespace {

constexpr std::array<const char*, 3> kComponent = {"x", "y", "z"};

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

// One segment, "name" or "name[n]"; nullopt if `text` is spelt otherwise.
std::optional<FieldPath::Segment> parse_segment(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && name_char(text[end])) ++end;
  if (end == 0 || !name_start(text[0])) return std::nullopt;
  FieldPath::Segment segment{std::string(text.substr(0, end)), -1};
  if (end == text.size()) return segment;
  if (text[end] != '[' || text.back() != ']' || end + 2 >= text.size()) return std::nullopt;
  const std::string_view digits = text.substr(end + 1, text.size() - end - 2);
  const auto [ptr, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), segment.index);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || segment.index < 0) {
    return std::nullopt;
  }
  return segment;
}

void check_range(int i, int size, const char* what) {
  if (i < 0 || i >= size) {
    throw std::out_of_range(std::string(what) + " " + std::to_string(i) + " is not in [0, " +
                            std::to_string(size - 1) + "]");
  }
}

}  // namespace

FieldPath::FieldPath(const char* spelled) : FieldPath(std::string(spelled)) {}

FieldPath::FieldPath(const std::string& spelled) {
  if (spelled.empty()) return;
  if (std::optional<FieldPath> parsed = parse(spelled)) {
    segments_ = std::move(parsed->segments_);
  } else {
    segments_.push_back(Segment{spelled, -1});
  }
}

std::optional<FieldPath> FieldPath::parse(std::string_view text) {
  if (text.empty()) return std::nullopt;
  FieldPath path;
  while (true) {
    const std::size_t dot = text.find('.');
    const std::optional<Segment> segment = parse_segment(text.substr(0, dot));
    if (!segment) return std::nullopt;
    path.segments_.push_back(*segment);
    if (dot == std::string_view::npos) return path;
    text.remove_prefix(dot + 1);
  }
}

FieldPath FieldPath::field(std::string_view name) const {
  FieldPath out = *this;
  out.segments_.push_back(Segment{std::string(name), -1});
  return out;
}

FieldPath FieldPath::element(int index) const {
  if (segments_.empty() || segments_.back().index >= 0) {
    throw std::logic_error("FieldPath '" + to_string() + "': only a field can be indexed");
  }
  if (index < 0) throw std::out_of_range("element " + std::to_string(index) + " is negative");
  FieldPath out = *this;
  out.segments_.back().index = index;
  return out;
}

FieldPath FieldPath::motion_row(int row) const {
  check_range(row, 7, "motion-space row");
  if (row == 6) return field("arm_angle");
  return field(row < 3 ? "translation" : "rotation").component(row % 3);
}

FieldPath FieldPath::component(int i) const {
  check_range(i, 3, "vector component");
  return field(kComponent[static_cast<std::size_t>(i)]);
}

FieldPath FieldPath::wrench_row(int i) const {
  check_range(i, 6, "wrench row");
  return field(i < 3 ? "force" : "torque").component(i % 3);
}

FieldPath FieldPath::twist_row(int i) const {
  check_range(i, 6, "twist row");
  return field(i < 3 ? "linear" : "angular").component(i % 3);
}

FieldPath FieldPath::joint(int i) const { return field("values").element(i); }

FieldPath FieldPath::at(SourcePosition position) const {
  FieldPath out = *this;
  out.position_ = std::move(position);
  return out;
}

FieldPath FieldPath::unplaced() const {
  FieldPath out = *this;
  out.position_.reset();
  return out;
}

std::string FieldPath::to_string() const {
  std::string out;
  if (position_) {
    out += position_->file;
    if (position_->line > 0) {
      out += ':' + std::to_string(position_->line);
      if (position_->column > 0) out += ':' + std::to_string(position_->column);
    }
    out += ": ";
  }
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    if (i > 0) out += '.';
    out += segments_[i].name;
    if (segments_[i].index >= 0) out += '[' + std::to_string(segments_[i].index) + ']';
  }
  return out;
}

}  // namespace tether
