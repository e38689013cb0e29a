# The remote site's gRPC server (remote_site/server/src/server): in-process against the embedded
# simulated arm, through the generated stubs, plus the standard health service through its
# public schema and server reflection through raw bytes (libgrpc++_reflection already
# registers the reflection schema, so it cannot be compiled in again).

set(server_test_proto_dir ${CMAKE_CURRENT_LIST_DIR}/protos)
set(server_test_generated ${CMAKE_CURRENT_BINARY_DIR}/server_test_protos)
file(MAKE_DIRECTORY ${server_test_generated})
set(server_test_proto_sources)
foreach(proto grpc/health/v1/health.proto)
  string(REGEX REPLACE "\\.proto$" "" stem ${proto})
  set(outputs ${server_test_generated}/${stem}.pb.cc ${server_test_generated}/${stem}.grpc.pb.cc)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND protobuf::protoc --proto_path=${server_test_proto_dir}
            --cpp_out=${server_test_generated} --grpc_out=${server_test_generated}
            --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>
            ${server_test_proto_dir}/${proto}
    DEPENDS ${server_test_proto_dir}/${proto}
    VERBATIM)
  list(APPEND server_test_proto_sources ${outputs})
endforeach()
set_source_files_properties(${server_test_proto_sources} PROPERTIES COMPILE_OPTIONS "-w")

tether_add_test(remote_site_server_test
                SOURCES remote/server/remote_site_server_test.cc ${server_test_proto_sources}
                LIBS tether::remote tether::sim tether::proto gRPC::grpc++)
target_include_directories(remote_site_server_test PRIVATE ${server_test_generated})
target_compile_definitions(remote_site_server_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")

tether_add_test(control_lease_test SOURCES remote/server/control_lease_test.cc
                LIBS tether::remote)
target_include_directories(control_lease_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/server/src)

tether_add_test(task_store_test SOURCES remote/server/task_store_test.cc
                LIBS tether::remote tether::proto)
target_include_directories(task_store_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/server/src)

# tether-remote as a real process under SIGTERM with streams open: real time, run alone.
add_executable(remote_process_test remote/server/remote_process_test.cc)
tether_test_code_defaults(remote_process_test)
target_link_libraries(remote_process_test PRIVATE tether::proto gRPC::grpc++ GTest::gtest
                                                  GTest::gtest_main)
add_dependencies(remote_process_test tether-remote tether)
target_include_directories(remote_process_test PRIVATE support)
target_compile_definitions(remote_process_test PRIVATE
  TETHER_REMOTE_BINARY="$<TARGET_FILE:tether-remote>"
  TETHER_CONSOLE_BINARY="$<TARGET_FILE:tether>"
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
gtest_discover_tests(remote_process_test DISCOVERY_TIMEOUT 60
                     PROPERTIES RUN_SERIAL TRUE TIMEOUT 300
                                ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common")

# tether-remote over mutual TLS as a real process, called with generated stubs: handshake
# refusals, roles on every RPC, SIGHUP reloads, lease takeover, the audit trail and quotas.
# Real-time loop and a flood of calls: run alone.
add_executable(security_test remote/server/security_test.cc ${server_test_proto_sources})
tether_test_code_defaults(security_test)
target_link_libraries(security_test PRIVATE tether::proto tether::linkem gRPC::grpc++
                                            nlohmann_json::nlohmann_json GTest::gtest
                                            GTest::gtest_main)
add_dependencies(security_test tether-remote)
target_include_directories(security_test PRIVATE support ${server_test_generated})
target_compile_definitions(security_test PRIVATE
  TETHER_REMOTE_BINARY="$<TARGET_FILE:tether-remote>"
  TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  TETHER_TEST_PKI="${TETHER_TEST_PKI}"
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
gtest_discover_tests(security_test DISCOVERY_TIMEOUT 60
                     PROPERTIES RUN_SERIAL TRUE TIMEOUT 120 FIXTURES_REQUIRED test_pki
                                ENVIRONMENT "TETHER_DATA_DIR=${PROJECT_SOURCE_DIR}/common")

# The security building blocks, unit by unit.
foreach(unit roles_file quotas audit_log eye_source)
  tether_add_test(${unit}_test SOURCES remote/server/${unit}_test.cc
                  LIBS tether::remote nlohmann_json::nlohmann_json)
  target_include_directories(${unit}_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/server/src)
endforeach()

tether_add_test(teleop_wire_test SOURCES remote/server/wire_test.cc
                LIBS tether::remote tether::proto)
target_include_directories(teleop_wire_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/server/src)

# The black box (remote_site/server/src/black_box.h): a real-time loop on the simulated arm
# recorded into a ring of MCAP segments.
tether_add_test(black_box_test SOURCES remote/server/black_box_test.cc
                LIBS tether::remote tether::proto tether::sim tether::mcap)
target_include_directories(black_box_test PRIVATE ${PROJECT_SOURCE_DIR}/remote_site/server/src)
