// The arm's YAML files (arm_yaml.h): MoveIt joint_limits.yaml and the tether arm profile,
// both parsed from the same input. Only tether::ArmModelError naming the file may come out;
// a yaml-cpp exception, a crash or a sanitizer report is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tether/common/arm_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const tether::JointLimitsYaml limits = tether::parse_joint_limits_yaml(text, "fuzz.yaml");
    for (const auto& [name, entry] : limits.joints) {
      // What the parser promises the loader: finite, ordered, positive.
      if (entry.lower && !(*entry.lower < *entry.upper)) __builtin_trap();
      if (entry.velocity && !(*entry.velocity > 0.0)) __builtin_trap();
      if (entry.acceleration && !(*entry.acceleration > 0.0)) __builtin_trap();
    }
  } catch (const tether::ArmModelError&) {
  }
  try {
    const tether::ArmProfile profile = tether::parse_arm_profile(text, "fuzz.yaml");
    for (const auto& [name, entry] : profile.joints) {
      if (entry.lower.has_value() != entry.upper.has_value()) __builtin_trap();
      if (entry.acceleration && !(*entry.acceleration > 0.0)) __builtin_trap();
    }
    if (profile.point_tolerance && !(*profile.point_tolerance > 0.0)) __builtin_trap();
  } catch (const tether::ArmModelError&) {
  }
  return 0;
}
