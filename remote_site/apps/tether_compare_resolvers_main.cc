// tether-compare-resolvers: the same scenarios through every redundancy resolver, as a
// Markdown table (remote_site/comparison/resolver_comparison.h says what is measured).

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tether/common/urdf_loader.h"
#include "tether/remote/comparison/resolver_comparison.h"

namespace {

std::optional<tether::ResolverKind> parse_resolver(const std::string& name) {
  using tether::ResolverKind;
  if (name == "dls") return ResolverKind::kDls;
  if (name == "configuration-control") return ResolverKind::kConfigurationControl;
  if (name == "constrained-optimisation") return ResolverKind::kConstrainedOptimisation;
  if (name == "shake") return ResolverKind::kShake;
  return std::nullopt;
}

int usage(std::ostream& out, int status) {
  out << "usage: tether-compare-resolvers [--out FILE] [--laps N] [--task-dir DIR]\n"
         "                                [--scenario 0-3] [--resolver NAME]\n"
         "  Runs door opening, obstacle pass, reach through a hole and a closed path\n"
         "  (N laps, default 20) through DLS, configuration control, constrained\n"
         "  optimisation and SHAKE on the simulated iiwa7 and prints a Markdown table\n"
         "  (also written to FILE). Exit status: 0 every run completed, 1 some did not,\n"
         "  2 usage.\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tether;
  using namespace tether::remote;
  ComparisonOptions options;
  std::string out_path;
  std::vector<Scenario> scenarios = {Scenario::kDoorOpening, Scenario::kObstaclePass,
                                     Scenario::kReachThroughHole, Scenario::kClosedPath};
  std::vector<ResolverKind> resolvers = {ResolverKind::kDls, ResolverKind::kConfigurationControl,
                                         ResolverKind::kConstrainedOptimisation,
                                         ResolverKind::kShake};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return usage(std::cout, 0);
    if (i + 1 >= argc) return usage(std::cerr, 2);
    const std::string value = argv[++i];
    if (arg == "--out") {
      out_path = value;
    } else if (arg == "--laps") {
      options.closed_path_laps = std::atoi(value.c_str());
      if (options.closed_path_laps < 1 || options.closed_path_laps > 1000) {
        std::cerr << "tether-compare-resolvers: --laps " << value << ": must be in [1, 1000]\n";
        return 2;
      }
    } else if (arg == "--task-dir") {
      options.task_dir = value;
    } else if (arg == "--scenario") {
      const int n = std::atoi(value.c_str());
      if (n < 0 || n > 3) return usage(std::cerr, 2);
      scenarios = {static_cast<Scenario>(n)};
    } else if (arg == "--resolver") {
      const auto kind = parse_resolver(value);
      if (!kind) {
        std::cerr << "tether-compare-resolvers: --resolver " << value
                  << ": expected dls, configuration-control, constrained-optimisation or shake\n";
        return 2;
      }
      resolvers = {*kind};
    } else {
      return usage(std::cerr, 2);
    }
  }
  try {
    const ArmModel arm = load_default_arm();
    std::vector<ScenarioResult> results;
    bool all = true;
    for (Scenario s : scenarios) {
      for (ResolverKind k : resolvers) {
        std::cerr << "running " << to_string(s) << " with " << resolver_label(k) << " ..."
                  << std::endl;
        results.push_back(run_scenario(s, k, arm, options));
        all = all && results.back().completed;
      }
    }
    const std::string table = comparison_table(results);
    std::cout << table;
    if (!out_path.empty()) {
      std::ofstream file(out_path);
      file << table;
      if (!file) {
        std::cerr << "tether-compare-resolvers: cannot write " << out_path << '\n';
        return 1;
      }
    }
    return all ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "tether-compare-resolvers: " << e.what() << '\n';
    return 1;
  }
}
