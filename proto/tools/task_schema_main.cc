// tether-task-schema: writes what is generated from the task schema's (tether.v1.spec)
// options — the ranges table validation compiles (--rules, run by the build) and the task
// author's reference page (--reference) — and checks that a page is current (--check).
// A build tool: not installed.

#include <google/protobuf/descriptor.pb.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tether/cli/options.h"
#include "tether/proto/task_schema.h"

namespace {

constexpr std::string_view kBegin = "<!-- BEGIN GENERATED: tether-task-schema -->\n";
constexpr std::string_view kEnd = "<!-- END GENERATED: tether-task-schema -->\n";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_if_changed(const std::string& path, const std::string& text) {
  try {
    if (read_file(path) == text) return;  // keep the time stamp: nothing rebuilds
  } catch (const std::runtime_error&) {
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(path + ": cannot be written");
}

// The page with its generated part replaced by `generated` (the markers kept).
std::string with_generated(const std::string& page, const std::string& path,
                           const std::string& generated) {
  const std::size_t begin = page.find(kBegin);
  const std::size_t end = page.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    throw std::runtime_error(path + ": the markers '" + std::string(kBegin.substr(0, 44)) +
                             "' and '" + std::string(kEnd.substr(0, 42)) +
                             "' (each on a line of its own) are missing");
  }
  return page.substr(0, begin + kBegin.size()) + generated + page.substr(end);
}

// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(x, la));
    const bool gb = static_cast<bool>(std::getline(y, lb));
    if (!ga && !gb) return "";
    if (!ga || !gb || la != lb) {
      return "line " + std::to_string(line) + ":\n  page:      " + (ga ? la : "(end)") +
             "\n  generated: " + (gb ? lb : "(end)");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = tether::cli;
  CLI::App app(
      "Writes what is generated from the task schema's (tether.v1.spec) field options: the\n"
      "ranges validation compiles, and the task reference page's generated part (between its\n"
      "BEGIN/END GENERATED markers). --check fails when a page differs from what its options\n"
      "generate, naming the first line that differs.");
  cli::configure(app, {"tether-task-schema",
                       {"tether-task-schema --rules FILE.inc",
                        "tether-task-schema --descriptors FILE.desc --reference PAGE.md",
                        "tether-task-schema --descriptors FILE.desc --check PAGE.md"},
                       {{cli::kExitOk, "ok (the page is current)"},
                        {cli::kExitFailure, "a field without a spec, a file error, a stale page"},
                        {cli::kExitUsage, "bad command line"}}});
  std::string rules, reference, check, descriptors;
  app.add_option("--rules", rules, "write the ranges table (C++ rows) to FILE")
      ->option_text("FILE");
  app.add_option("--reference", reference, "rewrite PAGE's generated part")->option_text("PAGE");
  app.add_option("--check", check, "compare PAGE's generated part with the schema")
      ->option_text("PAGE");
  app.add_option("--descriptors", descriptors,
                 "the schema's descriptor set with comments (protoc --include_source_info), "
                 "for --reference and --check")
      ->option_text("FILE");
  if (const auto status = cli::parse(app, argc, argv)) return *status;
  if (rules.empty() && reference.empty() && check.empty()) {
    std::cerr << "tether-task-schema: nothing to do: give --rules, --reference or --check\n";
    return cli::kExitUsage;
  }
  if ((!reference.empty() || !check.empty()) && descriptors.empty()) {
    std::cerr << "tether-task-schema: --reference and --check need --descriptors\n";
    return cli::kExitUsage;
  }
  try {
    const auto schema = tether::proto::task_schema();
    if (!rules.empty()) write_if_changed(rules, tether::proto::rules_table(schema));
    if (reference.empty() && check.empty()) return cli::kExitOk;
    google::protobuf::FileDescriptorSet set;
    if (!set.ParseFromString(read_file(descriptors))) {
      throw std::runtime_error(descriptors + ": not a FileDescriptorSet");
    }
    const std::string generated = tether::proto::reference(schema, set);
    if (!reference.empty()) {
      write_if_changed(reference, with_generated(read_file(reference), reference, generated));
    }
    if (!check.empty()) {
      const std::string page = read_file(check);
      const std::string want = with_generated(page, check, generated);
      if (page != want) {
        std::cerr << check << ": the task reference differs from the schema's options at "
                  << first_difference(page, want)
                  << "\nchange the (tether.v1.spec) option in proto/tether/v1/, then regenerate "
                     "the page: tether-task-schema --descriptors FILE.desc --reference "
                  << check << "\n";
        return cli::kExitFailure;
      }
      std::cout << check << ": current\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "tether-task-schema: " << e.what() << "\n";
    return cli::kExitFailure;
  }
  return cli::kExitOk;
}
