# Ground-station hand-controller layer (local_site/src/hand_controller): drivers, the
# simulated hand controller and the operator input. Paths are relative to tests/.
foreach(unit rate_device keyboard evdev joystick script simulated open operator_input)
  tether_add_test(${unit}_test SOURCES local/hand_controller/${unit}_test.cc LIBS tether::local)
  target_compile_definitions(${unit}_test PRIVATE
    TETHER_LOCAL_SOURCE_DIR="${PROJECT_SOURCE_DIR}/local_site")
endforeach()
