# The ground's teleoperation session and its local model (local_site/src/teleop). Included
# from tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(local_model_test SOURCES local/teleop/local_model_test.cc
                LIBS tether::local tether::proto)
target_compile_definitions(local_model_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
tether_add_test(teleop_session_test SOURCES local/teleop/teleop_session_test.cc
                LIBS tether::local tether::proto)
