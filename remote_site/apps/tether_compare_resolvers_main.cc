// tether-compare-resolvers: the same scenarios through every redundancy resolver, as a
// Markdown table (remote_site/comparison/resolver_comparison.h says what is measured).

#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tether/cli/options.h"
#include "tether/common/urdf_loader.h"
#include "tether/common/vocabulary.h"
#include "tether/remote/comparison/resolver_comparison.h"

namespace {

// The names --resolver takes: the vocabulary's names with hyphens for spaces, so the shell
// needs no quotes ("configuration control" → configuration-control).
std::vector<std::pair<std::string, tether::ResolverKind>> resolver_names() {
  std::vector<std::pair<std::string, tether::ResolverKind>> names;
  for (const tether::ResolverKind kind :
       {tether::ResolverKind::kDls, tether::ResolverKind::kConfigurationControl,
        tether::ResolverKind::kConstrainedOptimisation, tether::ResolverKind::kShake}) {
    std::string name = tether::to_string(kind);
    std::replace(name.begin(), name.end(), ' ', '-');
    names.emplace_back(std::move(name), kind);
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tether;
  using namespace tether::remote;
  CLI::App app(
      "Runs door opening, obstacle pass, reach through a hole and a closed path (N laps)\n"
      "through DLS, configuration control, constrained optimisation and SHAKE on the simulated\n"
      "iiwa7 and prints a Markdown table (also written to FILE).");
  cli::configure(app, {"tether-compare-resolvers",
                       {"tether-compare-resolvers [--out FILE] [--laps N] [--scenario 0-3] "
                        "[--resolver NAME] [--task-dir DIR]"},
                       {{cli::kExitOk, "every run completed"},
                        {cli::kExitFailure, "some did not, or the table could not be written"},
                        {cli::kExitUsage, "bad command line"}}});
  ComparisonOptions options;
  std::string out_path;
  int scenario = -1;
  std::string resolver;
  const auto names = resolver_names();
  app.add_option("--out", out_path, "also write the table to FILE")->option_text("FILE");
  app.add_option("--laps", options.closed_path_laps, "laps of the closed path (default 20)")
      ->option_text("N")
      ->transform(cli::Count(1, 1000));
  app.add_option("--task-dir", options.task_dir,
                 "where door_force.textproto lives (default: the source tree's tasks)")
      ->option_text("DIR");
  app.add_option("--scenario", scenario,
                 "only this scenario: 0 door opening, 1 obstacle pass, 2 reach through a hole,\n"
                 "3 closed path (default: all)")
      ->option_text("0-3")
      ->transform(cli::Count(0, 3));
  app.add_option("--resolver", resolver, "only this resolver (default: all)")
      ->option_text("NAME")
      ->check(cli::OneOf(
          [&names](std::string_view name) {
            for (const auto& [known, kind] : names) {
              if (name == known) return true;
            }
            return false;
          },
          "dls, configuration-control, constrained-optimisation or shake"));
  if (const auto status = cli::parse(app, argc, argv)) return *status;

  std::vector<Scenario> scenarios = {Scenario::kDoorOpening, Scenario::kObstaclePass,
                                     Scenario::kReachThroughHole, Scenario::kClosedPath};
  if (scenario >= 0) scenarios = {static_cast<Scenario>(scenario)};
  std::vector<ResolverKind> resolvers;
  for (const auto& [name, kind] : names) {
    if (resolver.empty() || resolver == name) resolvers.push_back(kind);
  }

  try {
    const ArmModel arm = load_default_arm();
    std::vector<ScenarioResult> results;
    bool all = true;
    for (Scenario s : scenarios) {
      for (ResolverKind k : resolvers) {
        // Constrained optimisation twice: the seed's six task rows, and ψ as a 7th row.
        std::vector<ComparisonOptions> variants{options};
        if (k == ResolverKind::kConstrainedOptimisation) {
          variants.push_back(options);
          variants.back().constrained_optimisation_arm_angle_row = true;
        }
        for (const ComparisonOptions& variant : variants) {
          std::cerr << "running " << to_string(s) << " with " << resolver_label(k)
                    << (variant.constrained_optimisation_arm_angle_row ? ", arm angle row" : "")
                    << " ..." << std::endl;
          results.push_back(run_scenario(s, k, arm, variant));
          all = all && results.back().completed;
        }
      }
    }
    const std::string table = comparison_table(results);
    std::cout << table;
    if (!out_path.empty()) {
      std::ofstream file(out_path);
      file << table;
      if (!file) {
        std::cerr << "tether-compare-resolvers: cannot write " << out_path << '\n';
        return cli::kExitFailure;
      }
    }
    return all ? cli::kExitOk : cli::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "tether-compare-resolvers: " << e.what() << '\n';
    return cli::kExitFailure;
  }
}
