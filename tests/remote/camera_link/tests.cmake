# The camera link (remote_site/camera_link): its protocol, and a server and a site's
# NetworkCameras on loopback, with a scripted camera device and with the simulated cell's
# rendered cameras. Included from tests/CMakeLists.txt, so paths are relative to tests/.
tether_add_test(camera_link_protocol_test SOURCES remote/camera_link/protocol_test.cc
                LIBS tether::camera_link)
tether_add_test(camera_link_test SOURCES remote/camera_link/camera_link_test.cc
                LIBS tether::camera_link tether::sim)
foreach(test camera_link_protocol_test camera_link_test)
  target_include_directories(${test} PRIVATE remote/arm_link)
  target_include_directories(${test} SYSTEM PRIVATE ${ASIO_INCLUDE_DIR})
endforeach()

# Visual tracking in real time from images served over the link: run alone.
tether_add_test(camera_vision_arm_test SERIAL SOURCES remote/camera_link/camera_vision_arm_test.cc
                LIBS tether::camera_link tether::sim tether::proto)
target_include_directories(camera_vision_arm_test PRIVATE remote/arm_link)
target_include_directories(camera_vision_arm_test SYSTEM PRIVATE ${ASIO_INCLUDE_DIR})
target_compile_definitions(camera_vision_arm_test PRIVATE
  TETHER_TASK_DIR="${PROJECT_SOURCE_DIR}/remote_site/tasks")
