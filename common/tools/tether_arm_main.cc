// tether-arm: load a 7-DOF arm description and print its kinematics.

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "arm_report.h"
#include "tether/common/urdf_loader.h"

namespace {

constexpr const char* kUsage = R"(usage: tether-arm [options]

Loads a 7-DOF arm and prints forward kinematics, shoulder/elbow/wrist points, the arm
angle and the composite 7x7 Jacobian at a few configurations.

options:
  --arm NAME|FILE.urdf   iiwa7 (default), panda, or a URDF file
  --base LINK            base link of a URDF file (default: its root link)
  --tool LINK            tool link of a URDF file (required with a file)
  --q a1,...,a7          a configuration in degrees (repeatable; default: three demo poses)
  --reference x,y,z      arm-angle reference plane vector (default 0,0,1: vertical)
  -h, --help             this text
exit codes: 0 ok, 1 the arm could not be loaded, 2 bad command line
)";

bool parse_list(const std::string& text, std::vector<double>& values) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0') return false;
    values.push_back(v);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string arm_name = "iiwa7";
  tether::UrdfLoadOptions options;
  std::vector<tether::JointVector> configurations;
  tether::Vector3 reference = tether::Vector3::UnitZ();

  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "tether-arm: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--arm") {
      arm_name = value();
    } else if (arg == "--base") {
      options.base_link = value();
    } else if (arg == "--tool") {
      options.tool_link = value();
    } else if (arg == "--q" || arg == "--reference") {
      const std::string text = value();
      std::vector<double> v;
      const std::size_t want = arg == "--q" ? tether::kArmDof : 3;
      if (!parse_list(text, v) || v.size() != want) {
        std::cerr << "tether-arm: " << arg << " '" << text << "': expected " << want
                  << " comma-separated numbers\n";
        return 2;
      }
      if (arg == "--q") {
        configurations.push_back(tether::JointVector(Eigen::Map<tether::JointVector>(v.data())) *
                                 (M_PI / 180.0));
      } else {
        reference = tether::Vector3(v[0], v[1], v[2]);
      }
    } else {
      std::cerr << "tether-arm: unknown option '" << arg << "'\n" << kUsage;
      return 2;
    }
  }

  try {
    const tether::ArmModel arm = tether::load_arm_by_name(arm_name, options);
    if (configurations.empty()) configurations = tether::tools::demo_configurations(arm);
    tether::tools::print_arm_report(arm, configurations, reference, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "tether-arm: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
