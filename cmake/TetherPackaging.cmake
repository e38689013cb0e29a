# The Debian package (cpack -G DEB in a build tree): tether_<version>_amd64.deb with the
# programs in /usr/bin, arms, tasks and scripts in /usr/share/tether, the systemd unit
# tether-remote@.service, an example site configuration and the README. The programs find
# their data relative to themselves (/usr/bin/../share/tether), so any build tree packages.
include(GNUInstallDirs)
install(PROGRAMS deploy/make-pki.sh DESTINATION bin RENAME tether-make-pki)
install(DIRECTORY local_site/scripts/ DESTINATION share/tether/scripts
        FILES_MATCHING PATTERN "*.hcscript")
install(FILES deploy/systemd/tether-remote@.service DESTINATION lib/systemd/system)
install(FILES deploy/systemd/site.conf DESTINATION share/doc/tether/examples)
install(FILES README.md DESTINATION share/doc/tether)
install(DIRECTORY docs/ DESTINATION share/doc/tether/docs)

# Man pages, written by help2man from each program's own --help and --version at build time
# (so a page cannot disagree with its program), installed to share/man/man1.
find_program(HELP2MAN help2man REQUIRED)  # Debian's help2man (deploy/install-deps.sh)
set(man_dir ${CMAKE_BINARY_DIR}/man)
set(man_pages)
foreach(entry
    "tether|the operator console: tasks, motion, teleoperation and recordings of remote sites"
    "tether-ground|the ground station: the web console, teleoperation and the predicted arm"
    "tether-remote|the remote site: the executor of task parameter sets and its service"
    "tether-simarm|a simulated arm (MuJoCo) behind the arm link"
    "tether-arm|checks and reports a 7-DOF arm description (URDF) for tether"
    "tether-linkem|a link emulator: delay, jitter, loss and bandwidth between two sites"
    "tether-compare-resolvers|compares the redundancy resolvers on one task"
    "tether-seed-pictures|draws the seed documents' figures from tether's runs")
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 program)
  list(GET parts 1 summary)
  set(page ${man_dir}/${program}.1)
  set(include)
  set(include_step)
  set(run $<TARGET_FILE:${program}>)
  if(program STREQUAL "tether")
    # Its commands as the synopsis, and each command's own help as a COMMANDS section.
    set(include --include=${man_dir}/commands/tether.h2m)
    set(include_step COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/man-commands.sh
                     $<TARGET_FILE:tether> ${man_dir}/commands)
    set(run ${man_dir}/commands/tether)
  endif()
  add_custom_command(
    OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    ${include_step}
    COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1 --name=${summary} ${include}
            --output=${page} ${run}
    DEPENDS ${program} ${PROJECT_SOURCE_DIR}/cmake/man-commands.sh
    COMMENT "help2man ${program}"
    VERBATIM)
  list(APPEND man_pages ${page})
endforeach()
set(page ${man_dir}/tether-make-pki.1)
add_custom_command(
  OUTPUT ${page}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
  COMMAND ${HELP2MAN} --no-info --section=1
          "--name=credentials for tether's mutual TLS: a CA, sites, people and roles"
          --version-string=${PROJECT_VERSION} --output=${page}
          ${PROJECT_SOURCE_DIR}/deploy/make-pki.sh
  DEPENDS ${PROJECT_SOURCE_DIR}/deploy/make-pki.sh
  COMMENT "help2man tether-make-pki"
  VERBATIM)
list(APPEND man_pages ${page})
add_custom_target(man_pages ALL DEPENDS ${man_pages})
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tether)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tether maintainers <tether@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "telerobotics for 7-DOF redundant arms: ground station and remote site")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tether_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, openssl, libegl-mesa0, libgl1-mesa-dri")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
