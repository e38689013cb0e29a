// tether::cli: the value parsers every program shares, their CLI11 validators, and the
// common --help / --version / usage-error behaviour of a configured CLI::App.
#include "tether/cli/options.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tether::cli {
namespace {

// The message of the std::invalid_argument `parse` throws; "no error" if it throws none.
template <typename Parse>
std::string error_of(Parse parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Outcome {
  std::optional<int> status;  // empty: the program would run
  std::string out, err;
};

Outcome run(CLI::App& app, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Outcome outcome;
  outcome.status = parse(app, args, out, err);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

void configure_tool(CLI::App& app) {
  configure(app,
            {"tool",
             {"tool --duration T [options]"},
             {{kExitOk, "ok"}, {kExitFailure, "it failed"}, {kExitUsage, "bad command line"}}});
}

// ---- parsers ----

TEST(ParseSeconds, TakesPlainSecondsAndTheUnitsSMsAndUs) {
  EXPECT_DOUBLE_EQ(parse_seconds("2.5"), 2.5);
  EXPECT_DOUBLE_EQ(parse_seconds("10s"), 10.0);
  EXPECT_DOUBLE_EQ(parse_seconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_seconds("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("1e-3"), 1e-3);
  EXPECT_DOUBLE_EQ(parse_seconds("1000000"), kMaxSeconds);
}

TEST(ParseSeconds, RejectsWhatIsNotAPositiveFiniteTimeNamingTheValueAndTheRange) {
  for (const std::string text :
       {"0", "0ms", "-1s", "inf", "nan", "5min", "", "ms", "1000001", "1 s", "+1s", "2.5 "}) {
    EXPECT_EQ(error_of([&] { parse_seconds(text); }),
              "'" + text + "': expected a time in (0, 1000000] s, e.g. 2.5, 10s, 500ms or 250us");
  }
}

TEST(ParseSeconds, KeepsToAnExplicitRangeIncludingItsMinimum) {
  EXPECT_DOUBLE_EQ(parse_seconds("1ms", 1e-3, 0.1), 1e-3);
  EXPECT_DOUBLE_EQ(parse_seconds("50ms", 1e-3, 0.1), 0.05);
  EXPECT_TRUE(contains(error_of([] { parse_seconds("500us", 1e-3, 0.1); }),
                       "'500us': expected a time in [0.001, 0.1] s"));
  EXPECT_TRUE(contains(error_of([] { parse_seconds("101ms", 1e-3, 0.1); }),
                       "'101ms': expected a time in [0.001, 0.1] s"));
}

TEST(ParseCount, TakesWholeDecimalNumbersInTheRange) {
  EXPECT_EQ(parse_count("1", 1, 1000000), 1);
  EXPECT_EQ(parse_count("1000000", 1, 1000000), 1000000);
  EXPECT_EQ(parse_count("010", 0, 100), 10);  // decimal, not octal
  EXPECT_EQ(parse_count("-3", -5, 5), -3);
}

TEST(ParseCount, RejectsFractionsPrefixesAndValuesOutsideTheRangeNamingIt) {
  for (const std::string text : {"0", "1000001", "10.5", "0x10", "+5", "", " 5", "5 ", "ten"}) {
    EXPECT_EQ(error_of([&] { parse_count(text, 1, 1000000); }),
              "'" + text + "': expected a whole number in [1, 1000000]");
  }
}

TEST(ParseNumber, TakesFiniteNumbersInTheRange) {
  EXPECT_DOUBLE_EQ(parse_number("0.1", 0.0, 10.0), 0.1);
  EXPECT_DOUBLE_EQ(parse_number("10", 0.0, 10.0), 10.0);
  EXPECT_DOUBLE_EQ(parse_number("-1e3"), -1000.0);
}

TEST(ParseNumber, RejectsNonNumbersAndValuesOutsideTheRangeNamingIt) {
  EXPECT_EQ(error_of([] { parse_number("11", 0.0, 10.0); }), "'11': expected a number in [0, 10]");
  EXPECT_EQ(error_of([] { parse_number("-0.5", 0.0, 10.0); }),
            "'-0.5': expected a number in [0, 10]");
  EXPECT_EQ(error_of([] { parse_number("1.5x", 0.0, 10.0); }),
            "'1.5x': expected a number in [0, 10]");
  EXPECT_EQ(error_of([] { parse_number("nan"); }), "'nan': expected a finite number");
  EXPECT_EQ(error_of([] { parse_number("inf"); }), "'inf': expected a finite number");
  EXPECT_EQ(error_of([] { parse_number("0", 1e-6, std::numeric_limits<double>::infinity()); }),
            "'0': expected a finite number >= 1e-06");
}

TEST(ParseNumberList, TakesExactlyTheGivenNumberOfCommaSeparatedNumbers) {
  EXPECT_EQ(parse_number_list("0,90,0,-45,0,30.5,0", 7),
            (std::vector<double>{0, 90, 0, -45, 0, 30.5, 0}));
  EXPECT_EQ(parse_number_list("0,0,1", 3), (std::vector<double>{0, 0, 1}));
  for (const std::string text : {"1,2", "1,2,3,4", "1,,3", "1,2,3,", "1,2,x", "", "1,2,nan"}) {
    EXPECT_EQ(error_of([&] { parse_number_list(text, 3); }),
              "'" + text + "': expected 3 comma-separated finite numbers");
  }
}

TEST(ParseAddress, SplitsHostAndPortKeepingTheTextForGrpc) {
  Address a = parse_address("127.0.0.1:50051");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 50051);
  EXPECT_EQ(a.text, "127.0.0.1:50051");
  a = parse_address("[::1]:7");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 7);
  EXPECT_EQ(a.text, "[::1]:7");
  EXPECT_EQ(parse_address("simarm.local:65535").host, "simarm.local");
  EXPECT_EQ(parse_address("0.0.0.0:0", 0).port, 0);  // a server's "any free port"
}

TEST(ParseAddress, RejectsWhatIsNotHostColonPortNamingTheTextAndThePortRange) {
  for (const std::string text : {"localhost", ":50051", "host:", "host:0", "host:65536", "host:50x",
                                 "host:-1", "::1:50051", "[]:50051"}) {
    const std::string message = error_of([&] { parse_address(text); });
    EXPECT_TRUE(contains(message, "'" + text + "': ")) << message;
    EXPECT_TRUE(contains(message, "expected HOST:PORT with PORT in [1, 65535]")) << message;
  }
  EXPECT_TRUE(contains(error_of([] { parse_address("host:70000", 0); }),
                       "bad port '70000' (expected HOST:PORT with PORT in [0, 65535]"));
  EXPECT_TRUE(
      contains(error_of([] { parse_address("::1:50051"); }), "an IPv6 host goes in brackets"));
}

// ---- validators on a CLI::App ----

TEST(SecondsValidator, StoresSecondsInADoubleWhenTransforming) {
  CLI::App app;
  configure_tool(app);
  double duration = 0.0;
  app.add_option("--duration", duration)->option_text("T")->transform(Seconds());
  EXPECT_FALSE(run(app, {"--duration", "500ms"}).status);
  EXPECT_DOUBLE_EQ(duration, 0.5);
  EXPECT_FALSE(run(app, {"--duration=250us"}).status);
  EXPECT_DOUBLE_EQ(duration, 250e-6);
}

TEST(CountValidator, StoresTheDecimalValueInAnIntegerWhenTransforming) {
  CLI::App app;
  configure_tool(app);
  int laps = 0;
  app.add_option("--laps", laps)->option_text("N")->transform(Count(1, 1000));
  EXPECT_FALSE(run(app, {"--laps", "010"}).status);  // CLI11 alone would read octal 8
  EXPECT_EQ(laps, 10);
}

TEST(NumberValidator, StoresTheValueAndRefusesOneOutsideTheRange) {
  CLI::App app;
  configure_tool(app);
  double scale = 0.0;
  app.add_option("--force-scale", scale)->option_text("S")->transform(Number(0.0, 10.0));
  EXPECT_FALSE(run(app, {"--force-scale", "0.25"}).status);
  EXPECT_DOUBLE_EQ(scale, 0.25);
  const Outcome o = run(app, {"--force-scale", "20"});
  EXPECT_EQ(o.status, kExitUsage);
  EXPECT_TRUE(contains(o.err, "tool: --force-scale: '20': expected a number in [0, 10]")) << o.err;
}

TEST(Validators, NameTheOptionTheValueAndWhatIsAllowed) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  CLI::App app;
  configure_tool(app);
  std::string scene, address, name, list, parsed;
  double duration = 0.0;
  app.add_option("--duration", duration)->option_text("T")->transform(Seconds());
  app.add_option("--scene", scene)
      ->option_text("NAME")
      ->check(OneOf([](std::string_view s) { return s == "free" || s == "door"; }, "free or door"));
  app.add_option("--remote", address)->option_text("HOST:PORT")->check(HostPort());
  app.add_option("--operator", name)->option_text("NAME")->check(NonEmpty());
  app.add_option("--reference", list)->option_text("x,y,z")->check(NumberList(3));
  app.add_option("--thing", parsed)->option_text("X")->check(ParsedBy([](const std::string& text) {
    if (text != "ok") throw std::invalid_argument("'" + text + "': expected ok");
  }));
  for (const Case& c : std::vector<Case>{
           {{"--duration", "0"}, "--duration: '0': expected a time in (0, 1000000] s"},
           {{"--scene", "kitchen"}, "--scene: 'kitchen': expected free or door"},
           {{"--remote", "localhost"}, "--remote: 'localhost': no ':' before the port"},
           {{"--operator", ""}, "--operator: must not be empty"},
           {{"--reference", "0,1"}, "--reference: '0,1': expected 3 comma-separated"},
           {{"--thing", "nope"}, "--thing: 'nope': expected ok"},
       }) {
    const Outcome o = run(app, c.args);
    EXPECT_EQ(o.status, kExitUsage) << c.message;
    EXPECT_TRUE(contains(o.err, "tool: " + c.message)) << o.err;
  }
  EXPECT_FALSE(run(app, {"--scene", "door", "--remote", "[::1]:50051", "--reference", "0,0,1",
                         "--thing", "ok"})
                   .status);
  EXPECT_EQ(scene, "door");
  EXPECT_EQ(address, "[::1]:50051");
}

// ---- programs ----

TEST(Program, HelpShowsUsageDescriptionOptionsAndExitStatusesAndExitsZero) {
  CLI::App app("Does one thing well.");
  configure_tool(app);
  double duration = 0.0;
  app.add_option("--duration", duration, "how long, e.g. 10s")->option_text("T");
  const Outcome o = run(app, {"--help"});
  EXPECT_EQ(o.status, kExitOk);
  EXPECT_EQ(o.out.rfind("usage: tool --duration T [options]\n\nDoes one thing well.\n", 0), 0u)
      << o.out;
  for (const char* part : {"  -h,--help", "  --version", "  --duration T", "how long, e.g. 10s",
                           "exit status:\n  0  ok\n  1  it failed\n  2  bad command line\n"}) {
    EXPECT_TRUE(contains(o.out, part)) << "missing '" << part << "' in\n" << o.out;
  }
  EXPECT_EQ(o.err, "");
}

TEST(Program, VersionPrintsTheNameAndTheProjectVersion) {
  CLI::App app;
  configure_tool(app);
  const Outcome o = run(app, {"--version"});
  EXPECT_EQ(o.status, kExitOk);
  EXPECT_EQ(o.out, std::string("tool ") + TETHER_VERSION + "\n");
  EXPECT_STREQ(version(), TETHER_VERSION);
}

TEST(Program, AUsageErrorReportsTheMessageTheUsageAndWhereTheHelpIs) {
  CLI::App app;
  configure_tool(app);
  const Outcome o = run(app, {"--bogus"});
  EXPECT_EQ(o.status, kExitUsage);
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(o.err,
            "tool: The following argument was not expected: --bogus\n"
            "usage: tool --duration T [options]\n"
            "(`tool --help` lists the options)\n");
}

TEST(Program, ARepeatedOptionTakesTheLastValue) {
  CLI::App app;
  configure_tool(app);
  double duration = 0.0;
  app.add_option("--duration", duration)->option_text("T")->transform(Seconds());
  EXPECT_FALSE(run(app, {"--duration", "1s", "--duration", "2s"}).status);
  EXPECT_DOUBLE_EQ(duration, 2.0);
}

TEST(Program, CommandsTakeTheProgramsOptionsBeforeOrAfterTheirName) {
  CLI::App app("Runs things.");
  configure(app, {"prog",
                  {"prog [global options] COMMAND"},
                  {{kExitOk, "ok"}, {kExitUsage, "usage"}},
                  "global options"});
  std::string remote, file;
  app.add_option("--remote", remote, "where")->option_text("HOST:PORT")->check(HostPort());
  CLI::App* command = add_command(app, "run", "run FILE", "Runs FILE.");
  command->add_option("FILE", file, "what to run")->required();
  CLI::App* other = add_command(app, "list", "list", "Lists.");

  EXPECT_FALSE(run(app, {"run", "a.txt", "--remote", "h:1"}).status);
  EXPECT_EQ(file, "a.txt");
  EXPECT_EQ(remote, "h:1");
  EXPECT_TRUE(command->parsed());
  EXPECT_FALSE(run(app, {"--remote=h:2", "run", "list"}).status);  // a command's name as FILE
  EXPECT_EQ(file, "list");
  EXPECT_EQ(remote, "h:2");
  EXPECT_FALSE(other->parsed());

  Outcome o = run(app, {"frobnicate"});
  EXPECT_EQ(o.status, kExitUsage);
  EXPECT_EQ(o.err,
            "prog: unknown command 'frobnicate'\n"
            "usage: prog [global options] COMMAND\n"
            "(`prog --help` lists the commands and options)\n");
  o = run(app, {"run"});
  EXPECT_EQ(o.status, kExitUsage);
  EXPECT_EQ(o.err,
            "prog: FILE is required\n"
            "usage: prog [global options] run FILE\n"
            "(`prog run --help` lists the options)\n");

  o = run(app, {"--help"});
  EXPECT_EQ(o.status, kExitOk);
  EXPECT_TRUE(contains(o.out, "commands:\n  prog run FILE\n  prog list\n")) << o.out;
  o = run(app, {"run", "--help"});
  EXPECT_EQ(o.status, kExitOk);
  for (const char* part :
       {"usage: prog [global options] run FILE\n", "Runs FILE.", "arguments:", "  FILE",
        "what to run", "global options:", "  --remote HOST:PORT", "exit status:\n  0  ok\n"}) {
    EXPECT_TRUE(contains(o.out, part)) << "missing '" << part << "' in\n" << o.out;
  }
  EXPECT_EQ(help_text(*command), o.out);
}

// ---- arms ----

TEST(ArmOptions, LoadTheShippedArmsByNameAndLeaveMissingFilesToTheRun) {
  CLI::App app;
  configure_tool(app);
  ArmOptions arm;
  add_arm_options(app, arm);
  EXPECT_FALSE(run(app, {}).status);
  EXPECT_EQ(arm.load().name, load_default_arm().name);
  EXPECT_FALSE(run(app, {"--arm", "panda"}).status);
  EXPECT_EQ(arm.load().name, load_panda_arm().name);
  // A missing file is a runtime failure (exit 1), not a usage error.
  EXPECT_FALSE(run(app, {"--arm", "/nonexistent.urdf", "--tool", "flange"}).status);
  EXPECT_EQ(arm.urdf.tool_link, "flange");
  EXPECT_THROW(arm.load(), ArmModelError);
  const Outcome o = run(app, {"--arm", ""});
  EXPECT_EQ(o.status, kExitUsage);
  EXPECT_TRUE(contains(o.err, "tool: --arm: must not be empty")) << o.err;
}

// TETHER_CONFIG names the file the TLS options are read from, as --config does (CLI11 reads
// its config file before the environment, so the variable alone was ignored), and an explicit
// --config on the command line wins.
TEST(TlsOptions, TetherConfigNamesTheFileTheOptionsAreReadFrom) {
  const std::string dir = ::testing::TempDir();
  const std::string from_env = dir + "/tether_config_env.conf";
  const std::string given = dir + "/tether_config_given.conf";
  std::ofstream(from_env) << "ca = \"env-ca.pem\"\ncert = \"env.pem\"\nkey = \"env.key\"\n";
  std::ofstream(given) << "ca = \"given-ca.pem\"\n";
  ::setenv("TETHER_CONFIG", from_env.c_str(), 1);
  {
    CLI::App app;
    configure_tool(app);
    TlsFiles files;
    add_tls_options(app, files, TlsRole::kClient, "TLS", "");
    EXPECT_FALSE(run(app, {}).status);
    EXPECT_EQ(files.ca, "env-ca.pem");
    EXPECT_EQ(files.cert, "env.pem");
  }
  {
    CLI::App app;
    configure_tool(app);
    TlsFiles files;
    add_tls_options(app, files, TlsRole::kClient, "TLS", "");
    EXPECT_FALSE(run(app, {"--config", given}).status);
    EXPECT_EQ(files.ca, "given-ca.pem");
  }
  ::unsetenv("TETHER_CONFIG");
}

}  // namespace
}  // namespace tether::cli
