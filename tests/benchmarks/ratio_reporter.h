#pragma once

// Console output as usual, then a table of tether/peer time ratios for benchmarks named
// "<Operation>/tether/<arm>" and "<Operation>/<peer>/<arm>".

#include <benchmark/benchmark.h>

#include <map>
#include <string>

namespace tether::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  struct Target {
    std::string operation;
    double max_ratio;
  };

  // Colour only on a terminal, so logs stay readable.
  explicit RatioReporter(std::string peer);
  void ReportRuns(const std::vector<Run>& runs) override;
  // Prints the table; returns false if any ratio is above its target.
  bool PrintRatios(const std::vector<Target>& targets) const;

 private:
  std::string peer_;
  std::map<std::string, double> ns_per_iteration_;
};

}  // namespace tether::bench
