# MCAP recordings (common/mcap): the writer and reader round trip, indexes and statistics,
# recovery of files whose writer died, rejection of corrupt ones; and the protobuf schemas
# the sites' recorders store (proto/mcap_schema.h).
tether_add_test(mcap_test SOURCES common/mcap/mcap_test.cc LIBS tether::mcap)
tether_add_test(mcap_allocation_test
                SOURCES common/mcap/mcap_allocation_test.cc
                        $<TARGET_OBJECTS:tether_allocation_counter>
                LIBS tether::mcap)
target_include_directories(mcap_allocation_test PRIVATE support)
tether_add_test(mcap_schema_test SOURCES common/mcap/mcap_schema_test.cc LIBS tether::proto)
