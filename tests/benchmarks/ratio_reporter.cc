#include "ratio_reporter.h"

#include <unistd.h>

#include <cstdio>

namespace tether::bench {

RatioReporter::RatioReporter(std::string peer)
    : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular),
      peer_(std::move(peer)) {}

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    if (run.run_type == Run::RT_Iteration && run.iterations > 0) {
      ns_per_iteration_[run.benchmark_name()] =
          run.GetAdjustedCPUTime() * benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
          benchmark::GetTimeUnitMultiplier(run.time_unit);
    }
  }
  ConsoleReporter::ReportRuns(runs);
}

bool RatioReporter::PrintRatios(const std::vector<Target>& targets) const {
  bool all_met = true;
  std::printf("\n%-22s %-8s %12s %12s %8s %8s\n", "operation", "arm", "tether [ns]",
              (peer_ + " [ns]").c_str(), "ratio", "target");
  for (const Target& target : targets) {
    for (const auto& [name, ours] : ns_per_iteration_) {
      const std::string prefix = target.operation + "/tether/";
      if (name.rfind(prefix, 0) != 0) continue;
      const std::string arm = name.substr(prefix.size());
      const auto peer = ns_per_iteration_.find(target.operation + "/" + peer_ + "/" + arm);
      if (peer == ns_per_iteration_.end()) continue;
      const double ratio = ours / peer->second;
      const bool met = ratio <= target.max_ratio;
      all_met &= met;
      std::printf("%-22s %-8s %12.1f %12.1f %7.3fx %7.2fx %s\n", target.operation.c_str(),
                  arm.c_str(), ours, peer->second, ratio, target.max_ratio,
                  met ? "" : "  ABOVE TARGET");
    }
  }
  return all_met;
}

}  // namespace tether::bench
