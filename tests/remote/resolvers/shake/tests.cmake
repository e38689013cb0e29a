# The SHAKE + simulated-annealing redundancy resolver (the SHAKE patent), remote_site/control/src/resolvers/shake.
# Included from tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(shake_test SOURCES remote/resolvers/shake/shake_test.cc LIBS tether::sim tether::tools)
tether_add_test(shake_objective_test SOURCES remote/resolvers/shake/objective_test.cc
                LIBS tether::sim tether::tools)
tether_add_test(shake_annealing_test SOURCES remote/resolvers/shake/annealing_test.cc
                LIBS tether::sim tether::tools)
tether_add_test(shake_picture_test SOURCES remote/resolvers/shake/picture_test.cc
                LIBS tether::sim tether::tools)
target_link_libraries(shake_picture_test PRIVATE PNG::PNG)
# The seed's test problems; each writes a PNG of the arm over time into its working directory.
tether_add_test(shake_scenario_test SOURCES remote/resolvers/shake/scenario_test.cc
                LIBS tether::sim tether::tools)
# The S-R-S arm as a point chain and the resolver the executor selects with kind = kShake.
tether_add_test(shake_srs_chain_test SOURCES remote/resolvers/shake/srs_chain_test.cc
                LIBS tether::sim tether::tools)
tether_add_test(shake_resolver_test SOURCES remote/resolvers/shake/shake_resolver_test.cc
                LIBS tether::sim tether::tools)
tether_add_test(shake_resolver_allocation_test
                SOURCES remote/resolvers/shake/shake_resolver_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::sim tether::tools)
target_include_directories(shake_resolver_allocation_test PRIVATE support)
# SHAKE through the executor on the simulated arm, on the comparison's scenarios.
tether_add_test(shake_executor_scenario_test
                SOURCES remote/resolvers/shake/executor_scenario_test.cc
                LIBS tether::sim tether::tools)
