// tether-arm: load a 7-DOF arm description and print its kinematics.

#include <iostream>
#include <string>
#include <vector>

#include "arm_report.h"
#include "tether/cli/options.h"
#include "tether/common/units.h"

int main(int argc, char** argv) {
  namespace cli = tether::cli;
  CLI::App app(
      "Loads a 7-DOF arm and prints forward kinematics, shoulder/elbow/wrist points, the arm\n"
      "angle and the composite 7x7 Jacobian at a few configurations.");
  cli::configure(app, {"tether-arm",
                       {"tether-arm [options]"},
                       {{cli::kExitOk, "ok"},
                        {cli::kExitFailure, "the arm could not be loaded"},
                        {cli::kExitUsage, "bad command line"}}});
  cli::ArmOptions arm;
  cli::add_arm_options(app, arm);
  std::vector<std::string> q_texts;
  app.add_option("--q", q_texts,
                 "a configuration in degrees (repeatable; default: three demo poses)")
      ->option_text("a1,...,a7")
      ->check(cli::NumberList(tether::kArmDof))
      // One value per --q, every --q kept.
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  std::string reference_text = "0,0,1";
  app.add_option("--reference", reference_text,
                 "arm-angle reference plane vector (default 0,0,1: vertical)")
      ->option_text("x,y,z")
      ->check(cli::NumberList(3));
  if (const auto status = cli::parse(app, argc, argv)) return *status;

  // Validated while parsing, so these parse.
  std::vector<tether::JointVector> configurations;
  for (const std::string& text : q_texts) {
    const std::vector<double> degrees = cli::parse_number_list(text, tether::kArmDof);
    configurations.push_back(
        tether::JointVector(Eigen::Map<const tether::JointVector>(degrees.data())) *
        tether::kDegToRad);
  }
  const std::vector<double> v = cli::parse_number_list(reference_text, 3);
  const tether::Vector3 reference(v[0], v[1], v[2]);

  try {
    const tether::LoadedArm loaded = arm.load_with_report();
    const tether::ArmModel& model = loaded.arm;
    if (configurations.empty()) configurations = tether::tools::demo_configurations(model);
    tether::tools::print_arm_report(model, configurations, reference, std::cout);
    // Where the limits and the arm-angle points came from, so a URDF completed by a limits
    // file and a profile can be checked before it drives anything.
    std::cout << "\n" << tether::format_load_report(loaded);
  } catch (const std::exception& e) {
    std::cerr << "tether-arm: " << e.what() << "\n";
    return cli::kExitFailure;
  }
  return cli::kExitOk;
}
