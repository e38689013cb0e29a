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
