# Ground-station links to remote sites (local_site/src/link). Included from
# tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(link_wire_test SOURCES local/link/wire_test.cc LIBS tether::local tether::proto)
target_include_directories(link_wire_test PRIVATE ${PROJECT_SOURCE_DIR}/local_site/src)

# The client against an in-process RemoteSite service written for the test.
tether_add_test(remote_site_client_test SOURCES local/link/remote_site_client_test.cc
                LIBS tether::local tether::proto)

# Recordings at the ground's edge: SessionRecorder written, recording_file read back.
tether_add_test(session_recorder_test SOURCES local/link/session_recorder_test.cc
                LIBS tether::local tether::proto tether::mcap)
target_compile_definitions(session_recorder_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")

# A camera view against the real service and the embedded simulation, in one process.
tether_add_test(camera_view_test SOURCES local/link/camera_view_test.cc
                LIBS tether::local tether::remote tether::sim tether::camera tether::proto)
target_compile_definitions(camera_view_test PRIVATE TETHER_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
