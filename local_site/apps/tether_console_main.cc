// tether: the operator console of a remote site (see `tether --help`).
#include <iostream>
#include <string>
#include <vector>

#include "tether/local/console/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return tether::local::console::run(args, std::cout, std::cerr);
}
