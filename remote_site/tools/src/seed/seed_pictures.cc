#include "tether/remote/seed/seed_pictures.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "tether/common/urdf_loader.h"
#include "tether/remote/seed/configuration_control_scenarios.h"
#include "tether/remote/seed/constrained_optimisation_guidance.h"
#include "tether/remote/seed/shake_scenarios.h"
#include "tether/remote/seed/sphere_pass.h"

namespace tether::remote::seed {
namespace {

// printf into a std::string: GCC 12 misreports a restrict overlap in "literal" + std::string.
template <class... Args>
std::string format(const char* pattern, Args... args) {
  char text[512];
  std::snprintf(text, sizeof text, pattern, args...);
  return text;
}

}  // namespace

std::vector<SeedPicture> seed_picture_list() {
  return {
      {"constrained_optimisation_guidance.png", "the constrained-optimisation patent",
       "guidance into the joint limits: the path, p falling, joints against their limits"},
      {"spheres_of_influence_pass.png", "the spheres-of-influence patent",
       "the pass between two spheres and each link's critical distance against the radius"},
      {"shake_hole.png", "the SHAKE patent", "problem 1: reaching through a hole and back out"},
      {"shake_circle_1dof.png", "the SHAKE patent",
       "problem 2: one redundant DOF machining a circular workpiece periodically"},
      {"shake_circle_2dof.png", "the SHAKE patent",
       "problem 2: two redundant DOF machining a circular workpiece periodically"},
      {"shake_corners.png", "the SHAKE patent",
       "problem 3: tracing a box's front face, aligned at its corners"},
      {"configuration_control_elbow_plane.png", "the configuration-control patent",
       "the elbow plane turning while the hand holds its pose"},
      {"configuration_control_gravity_torque.png", "the configuration-control patent",
       "the gravitational joint torques minimised along the self-motion"},
      {"configuration_control_obstacle.png", "the configuration-control patent",
       "an obstacle stopping the elbow at its sphere of influence"},
  };
}

std::vector<std::string> write_seed_pictures(const std::string& directory, std::ostream& log) {
  std::filesystem::create_directories(directory);
  const ArmModel arm = load_default_arm();
  std::vector<std::string> written;
  // Each entry runs its scenario, draws it and returns the figures for the log.
  const std::vector<std::function<std::string(const std::string&)>> writers = {
      [&](const std::string& path) {
        const GuidanceRun run = run_guidance_into_limits(arm);
        write_guidance_picture(run, path);
        return format(
            "p %.3f at the start, minimum %.4f, last %.4f; joint %d at its limit, worst excess "
            "%.2g rad",
            run.early_p, run.min_p, run.p.back(), run.limit_joint + 1, run.worst_limit_excess);
      },
      [&](const std::string& path) {
        const SpherePassRun run = run_sphere_pass(arm);
        if (!run.completed) {
          throw std::runtime_error(format("the pass stopped: %s", run.breach.c_str()));
        }
        write_sphere_pass_picture(run, path);
        std::string least = "least critical distance per link [mm]:";
        for (int k = 0; k < kArmDof; ++k) least += format(" %.1f", run.least[k] * 1e3);
        return least + format("; influence %.1f mm; tracking error %.1f mm",
                              run.obstacles.front().influence * 1e3, run.tracking_error * 1e3);
      },
      [](const std::string& path) {
        const ShakeHoleRun run = run_shake_hole();
        write_shake_hole_picture(run, path);
        return format("least clearance %.1f mm, %d/%zu steps placed", run.min_clearance * 1e3,
                      run.placed_steps, run.path.size());
      },
      [](const std::string& path) {
        const ShakeCircleRun run = run_shake_circle(4, 200.0);
        write_shake_circle_picture(run, path);
        return format("least clearance %.1f mm, last-period residual %.2f mm",
                      run.min_clearance * 1e3, run.residual.back() * 1e3);
      },
      [](const std::string& path) {
        const ShakeCircleRun run = run_shake_circle(5, 200.0);
        write_shake_circle_picture(run, path);
        return format("least clearance %.1f mm, last-period residual %.2f mm",
                      run.min_clearance * 1e3, run.residual.back() * 1e3);
      },
      [](const std::string& path) {
        const ShakeCornersRun run = run_shake_corners();
        write_shake_corners_picture(run, path);
        return format("least clearance %.1f mm", run.min_clearance * 1e3);
      },
      [](const std::string& path) {
        const ElbowPlaneRun run = run_elbow_plane();
        write_elbow_plane_picture(run, path);
        return format("psi %.3f -> %.3f rad (target %.3f), hand drift %.3f mm", run.psi_start,
                      run.run.psi.back(), run.target, run.run.max_position_drift * 1e3);
      },
      [](const std::string& path) {
        const GravityTorqueRun run = run_gravity_torque();
        write_gravity_torque_picture(run, path);
        return format("G %.1f -> %.1f N^2m^2, hand drift %.3f mm", run.run.cost.front(),
                      run.run.cost.back(), run.run.max_position_drift * 1e3);
      },
      [](const std::string& path) {
        const ElbowObstacleRun run = run_elbow_obstacle();
        write_elbow_obstacle_picture(run, path);
        return format("psi %.3f -> %.3f rad (free run %.3f), least distance - influence %.3f mm",
                      run.psi_start, run.run.psi.back(), run.unobstructed.psi.back(),
                      run.run.min_clearance_to_influence * 1e3);
      },
  };
  const std::vector<SeedPicture> list = seed_picture_list();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = (std::filesystem::path(directory) / list[i].file).string();
    try {
      const std::string figures = writers[i](path);
      log << path << ": " << figures << std::endl;
    } catch (const std::exception& e) {
      throw std::runtime_error(format("%s: %s", list[i].file.c_str(), e.what()));
    }
    written.push_back(path);
  }
  return written;
}

}  // namespace tether::remote::seed
