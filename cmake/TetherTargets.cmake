# Target-scoped defaults shared by every tether target: C++20, warnings, and
# warnings-as-errors in CI so our own code stays warning-free.
option(TETHER_WERROR "Treat warnings in tether's own code as errors" OFF)
# Sanitizer builds (presets asan, tsan; deploy/run-sanitizers.sh): a -fsanitize= list, e.g.
# "address,undefined" or "thread". Applied to every target, tests included, so the
# instrumented code sees every access; Debian's libraries stay uninstrumented.
set(TETHER_SANITIZE "" CACHE STRING "Sanitizers for every tether target (-fsanitize= list)")
if(TETHER_SANITIZE)
  # -g1: line tables, all a sanitizer's stack traces need; full debug information of the
  # Eigen, gRPC and Beast templates costs a good share of the build's time.
  add_compile_options(-fsanitize=${TETHER_SANITIZE} -fno-omit-frame-pointer -g1)
  add_link_options(-fsanitize=${TETHER_SANITIZE})
  if(TETHER_SANITIZE MATCHES "thread")
    # Asio's headers use std::atomic_thread_fence, which GCC warns TSan cannot model; tether's
    # own code uses none (SeqLock orders through its atomics).
    add_compile_options(-Wno-tsan)
  endif()
  if(TETHER_SANITIZE MATCHES "undefined")
    # A UB finding is a failure, not a log line.
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()

function(tether_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  # What every tool prints for --version.
  target_compile_definitions(${target} PRIVATE TETHER_VERSION="${PROJECT_VERSION}")
  # GCC 12's -Wmaybe-uninitialized fires inside Eigen's fixed-size SVD/LLT after inlining
  # (false positives attributed to the caller); every other warning stays on.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
  if(TETHER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# tether_add_library(<name> [EXPORT] SOURCES ...): the library tether_<name>, aliased as
# tether::<name>, with its public headers in include/ and private ones in src/ of the
# calling folder. EXPORT also installs it with its headers into the exported package
# (tetherConfig.cmake), for integrators who link it from their own project.
function(tether_add_library name)
  cmake_parse_arguments(ARG "EXPORT" "" "SOURCES" ${ARGN})
  set(target tether_${name})
  add_library(${target} ${ARG_SOURCES})
  add_library(tether::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  tether_target_defaults(${target})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  if(ARG_EXPORT)
    if(TETHER_SANITIZE)
      # An instrumented archive needs the sanitizer runtime wherever it is linked, also in an
      # integrator's project that finds this build's installed package.
      target_link_options(${target} INTERFACE -fsanitize=${TETHER_SANITIZE})
    endif()
    install(TARGETS ${target} EXPORT tetherTargets
            ARCHIVE DESTINATION lib LIBRARY DESTINATION lib INCLUDES DESTINATION include)
    install(DIRECTORY include/ DESTINATION include)
  endif()
endfunction()
