# The browser operator console's back end (local_site/src/web: tether-ground --web).
# Included from tests/CMakeLists.txt, so paths are relative to tests/.
find_package(Boost 1.74 REQUIRED)
foreach(unit static_files telemetry_hub teleop)
  tether_add_test(web_${unit}_test SOURCES local/web/${unit}_test.cc
                  LIBS tether::local Boost::headers nlohmann_json::nlohmann_json)
endforeach()
# `--device web` through open_hand_controller (standalone Asio: no Boost.Asio beside it).
tether_add_test(web_device_test SOURCES local/web/device_test.cc LIBS tether::local)

# Against the real pair: tether-remote --serve and tether-ground --web as child processes.
tether_add_test(web_end_to_end_test NEEDS_PKI SOURCES local/web/web_end_to_end_test.cc
                LIBS Boost::headers nlohmann_json::nlohmann_json)
add_dependencies(web_end_to_end_test tether-ground tether-remote)
target_include_directories(web_end_to_end_test PRIVATE support)
target_compile_definitions(web_end_to_end_test PRIVATE
  TETHER_REMOTE_BIN="$<TARGET_FILE:tether-remote>"
  TETHER_GROUND_BIN="$<TARGET_FILE:tether-ground>"
  TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
