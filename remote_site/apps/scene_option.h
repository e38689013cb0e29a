#pragma once

// --scene NAME as tether-remote and tether-simarm spell it: the names belong to the
// simulator (scene_from_name, kSceneNames), so tether::cli, which may not depend on it, does
// not hold this option.

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "tether/cli/options.h"
#include "tether/remote/sim/scene.h"

namespace tether::remote {

inline CLI::Option* add_scene_option(CLI::App& app, std::string& scene_name) {
  return app.add_option("--scene", scene_name, "free (default), door, wall, obstacles, proximity")
      ->option_text("NAME")
      ->check(cli::OneOf([](std::string_view name) { return scene_from_name(name).has_value(); },
                         kSceneNames));
}

}  // namespace tether::remote
