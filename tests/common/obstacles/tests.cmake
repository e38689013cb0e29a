# The spheres-of-influence patent: spheres of influence (common/obstacles.h).
tether_add_test(obstacles_test
                SOURCES common/obstacles/obstacles_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::common)
target_include_directories(obstacles_test PRIVATE support)
