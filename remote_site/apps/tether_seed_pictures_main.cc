// tether-seed-pictures: runs the scenarios behind every seed picture and writes the pictures
// (PNG) into one directory, each with a title, axes in metres, a legend and time as a colour
// scale (remote_site/tools/include/tether/remote/seed/seed_pictures.h lists them).

#include <iostream>
#include <string>

#include "tether/cli/options.h"
#include "tether/remote/seed/seed_pictures.h"

int main(int argc, char** argv) {
  using namespace tether;
  std::string list_text;
  for (const auto& p : remote::seed::seed_picture_list()) {
    list_text += "  " + p.file + "  (" + p.seed + ")\n";
  }
  CLI::App app(
      "Runs the scenarios the seed documents describe (SHAKE's three problems, the\n"
      "configuration-control elbow plane, the constrained-optimisation guidance into the joint\n"
      "limits, the spheres-of-influence pass) and writes one PNG per picture into DIR:\n" +
      list_text);
  cli::configure(app, {"tether-seed-pictures",
                       {"tether-seed-pictures [--out DIR]"},
                       {{cli::kExitOk, "every picture written"},
                        {cli::kExitFailure, "a run or a file failed"},
                        {cli::kExitUsage, "bad command line"}}});
  std::string out_dir = "seed-pictures";
  app.add_option("--out", out_dir,
                 "directory for the pictures, created if missing (default: seed-pictures)")
      ->option_text("DIR");
  if (const auto status = cli::parse(app, argc, argv)) return *status;
  try {
    remote::seed::write_seed_pictures(out_dir, std::cout);
    return cli::kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "tether-seed-pictures: " << e.what() << '\n';
    return cli::kExitFailure;
  }
}
