#pragma once

// --scene NAME and --wrist-stiffness SPEC as tether-remote and tether-simarm spell them: the
// names and the spec belong to the simulator (scene_from_name, wrist_compliance_from_spec),
// so tether::cli, which may not depend on it, does not hold these options.

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "tether/cli/options.h"
#include "tether/remote/sim/scene.h"

namespace tether::remote {

inline CLI::Option* add_scene_option(CLI::App& app, std::string& scene_name) {
  return app
      .add_option("--scene", scene_name, "free (default), door, wall, obstacles, proximity, target")
      ->option_text("NAME")
      ->check(cli::OneOf([](std::string_view name) { return scene_from_name(name).has_value(); },
                         kSceneNames));
}

// --wrist-stiffness SPEC (wrist_compliance_from_spec): the simulated gripper's compliance.
inline CLI::Option* add_wrist_option(CLI::App& app, WristComplianceParameters& wrist) {
  return app
      .add_option_function<std::string>(
          "--wrist-stiffness",
          [&wrist](const std::string& spec) { wrist = wrist_compliance_from_spec(spec); },
          "simulated wrist sensor and grasp compliance: rigid, default (5000:500) or\n"
          "K_T:K_R in N/m and N·m/rad")
      ->option_text("SPEC")
      ->check(cli::ParsedBy([](const std::string& spec) { wrist_compliance_from_spec(spec); }));
}

}  // namespace tether::remote
