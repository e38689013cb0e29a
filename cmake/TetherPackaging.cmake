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
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, openssl")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
