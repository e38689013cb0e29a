# Redundancy resolvers (remote_site/control/src/resolvers). Included from tests/CMakeLists.txt, so
# paths are relative to tests/.
tether_add_test(constrained_optimisation_test
                SOURCES remote/resolvers/constrained_optimisation_test.cc LIBS tether::control)

tether_add_test(constrained_optimisation_allocation_test
                SOURCES remote/resolvers/constrained_optimisation_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::control)
target_include_directories(constrained_optimisation_allocation_test PRIVATE support)
