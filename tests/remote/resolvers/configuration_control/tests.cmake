# Configuration control with user kinematic functions (the configuration-control patent),
# remote_site/control/src/resolvers/configuration_control. Included from tests/CMakeLists.txt, so
# paths are relative to tests/.
tether_add_test(configuration_control_functions_test
                SOURCES remote/resolvers/configuration_control/kinematic_functions_test.cc
                LIBS tether::sim tether::tools)
tether_add_test(configuration_control_resolver_test
                SOURCES remote/resolvers/configuration_control/configuration_control_resolver_test.cc
                LIBS tether::sim tether::tools)
tether_add_test(configuration_control_allocation_test
                SOURCES remote/resolvers/configuration_control/configuration_control_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::sim tether::tools)
target_include_directories(configuration_control_allocation_test PRIVATE support)
# The seed's scenarios; each writes a PNG of the arm over time into its working directory.
tether_add_test(configuration_control_scenario_test
                SOURCES remote/resolvers/configuration_control/scenario_test.cc
                LIBS tether::sim tether::tools)
