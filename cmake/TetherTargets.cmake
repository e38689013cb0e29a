# Target-scoped defaults shared by every tether target: C++20, warnings, and
# warnings-as-errors in CI so our own code stays warning-free.
option(TETHER_WERROR "Treat warnings in tether's own code as errors" OFF)

function(tether_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # GCC 12's -Wmaybe-uninitialized fires inside Eigen's fixed-size SVD/LLT after inlining
  # (false positives attributed to the caller); every other warning stays on.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
  if(TETHER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
