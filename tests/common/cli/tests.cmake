# The command line shared by every program (common/cli, tether::cli) and each program's own.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(cli_options_test SOURCES common/cli/options_test.cc LIBS tether::cli)

# Every installed program: --version prints "PROGRAM VERSION", --help the usage and the
# exit-status table, each with exit code 0; an unknown option is a usage error, exit code 2,
# naming the option and showing the usage. exit_code.sh appends "[exit code N]" to the
# output, so one regular expression checks the output and the exit code.
string(REPLACE "." "\\." tether_version_pattern "${PROJECT_VERSION}")
foreach(program tether tether-ground tether-remote tether-simarm tether-compare-resolvers
                tether-seed-pictures
                tether-arm)
  # What the program needs before it looks at anything else: tether-ground's one required
  # option (nothing is contacted, the unknown option ends the run first).
  set(required_args)
  if(program STREQUAL "tether-ground")
    set(required_args --site a=127.0.0.1:1)
  endif()
  set(run bash ${CMAKE_CURRENT_LIST_DIR}/exit_code.sh $<TARGET_FILE:${program}>)

  add_test(NAME Cli.${program}.PrintsItsVersion COMMAND ${run} --version)
  set_tests_properties(Cli.${program}.PrintsItsVersion PROPERTIES
    PASS_REGULAR_EXPRESSION "^${program} ${tether_version_pattern}\n\\[exit code 0\\]")

  add_test(NAME Cli.${program}.PrintsItsHelp COMMAND ${run} --help)
  set_tests_properties(Cli.${program}.PrintsItsHelp PROPERTIES
    PASS_REGULAR_EXPRESSION
      "^usage: ${program} .*\nexit status:\n  0  [^\n]+\n  1  [^\n]+\n  2  [^\n]+\n.*\\[exit code 0\\]")

  add_test(NAME Cli.${program}.RejectsAnUnknownOptionWithExitCode2
           COMMAND ${run} ${required_args} --no-such-option)
  set_tests_properties(Cli.${program}.RejectsAnUnknownOptionWithExitCode2 PROPERTIES
    PASS_REGULAR_EXPRESSION
      "^${program}: The following argument was not expected: --no-such-option\nusage: ${program} .*\\[exit code 2\\]")
endforeach()
