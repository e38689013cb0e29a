#pragma once

// Every seed picture, written by one call (tether-seed-pictures): the runs the scenario
// tests check, drawn with a title, axes in metres, a legend and time as a colour scale.

#include <ostream>
#include <string>
#include <vector>

namespace tether::remote::seed {

struct SeedPicture {
  std::string file;  // name inside the output directory
  std::string seed;  // the seed document it illustrates, by title
  std::string what;  // one line: what it shows
};

// The pictures write_seed_pictures() writes, in order.
std::vector<SeedPicture> seed_picture_list();

// Runs every scenario and writes its picture into `directory` (created if missing), with a
// line per picture and its figures on `log`. Returns the paths written. Throws
// std::runtime_error naming the picture when a run or a file fails.
std::vector<std::string> write_seed_pictures(const std::string& directory, std::ostream& log);

}  // namespace tether::remote::seed
