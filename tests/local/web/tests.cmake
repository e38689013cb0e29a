# The browser operator console's back end (local_site/src/web: tether-ground --web).
# Included from tests/CMakeLists.txt, so paths are relative to tests/.
find_package(Boost 1.74 REQUIRED)
# The tests' HTTP(S) and WebSocket client: Boost.Beast compiled once, here, rather than in
# every test that talks to the server.
add_library(tether_web_test_client STATIC local/web/web_client.cc)
tether_test_code_defaults(tether_web_test_client)
target_link_libraries(tether_web_test_client
  PUBLIC nlohmann_json::nlohmann_json PRIVATE Boost::headers OpenSSL::SSL OpenSSL::Crypto)
target_include_directories(tether_web_test_client PUBLIC local/web)

foreach(unit static_files telemetry_hub teleop requests)
  tether_add_test(web_${unit}_test SOURCES local/web/${unit}_test.cc
                  LIBS tether::local tether_web_test_client)
endforeach()
# The wire format's pure functions (web_protocol.h), against the shipped tasks and commands.
tether_add_test(web_protocol_test SOURCES local/web/protocol_test.cc
                LIBS tether::local tether::proto tether::sim)
target_compile_definitions(web_protocol_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
tether_add_test(web_auth_test SOURCES local/web/web_auth_test.cc LIBS tether::local)
# `--device web` through open_hand_controller (standalone Asio: no Boost.Asio beside it).
tether_add_test(web_device_test SOURCES local/web/device_test.cc LIBS tether::local)

# Against the real pair: tether-remote --serve and tether-ground --web as child processes.
foreach(unit end_to_end login)
  tether_add_test(web_${unit}_test NEEDS_PKI SOURCES local/web/web_${unit}_test.cc
                  LIBS tether_web_test_client)
  add_dependencies(web_${unit}_test tether-ground tether-remote)
  target_include_directories(web_${unit}_test PRIVATE support)
  target_compile_definitions(web_${unit}_test PRIVATE
    TETHER_REMOTE_BIN="$<TARGET_FILE:tether-remote>"
    TETHER_GROUND_BIN="$<TARGET_FILE:tether-ground>"
    TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endforeach()
target_link_libraries(web_login_test PRIVATE tether::local)
