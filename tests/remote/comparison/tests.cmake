# The resolvers compared on the same scenarios (batch pacing on the simulated arm).
tether_add_test(resolver_comparison_test SOURCES remote/comparison/resolver_comparison_test.cc
                LIBS tether::tools)

# The comparison command itself, as docs/performance.md runs it (fewer laps), so it cannot rot.
add_test(NAME TetherCompareResolvers.RunsEveryScenarioThroughEveryResolver
         COMMAND tether-compare-resolvers --laps 2 --out ${CMAKE_CURRENT_BINARY_DIR}/resolver_comparison.md)
set_tests_properties(TetherCompareResolvers.RunsEveryScenarioThroughEveryResolver PROPERTIES
  ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common"
  PASS_REGULAR_EXPRESSION "\\| closed path x20 \\| SHAKE \\+ annealing \\|")
