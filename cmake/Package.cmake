# The .deb: `cpack -G DEB` in the build folder (or `make deb`) after a full build. Installs under
# /usr with the layout of cmake/Install.cmake. Depends on the Debian packages of the libraries
# the binaries load (dpkg-shlibdeps) and on Open MPI's launcher.
set(CPACK_PACKAGE_NAME colltune)
set(CPACK_PACKAGE_VENDOR "colltune")
set(CPACK_PACKAGE_CONTACT "colltune maintainers <colltune@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "autotuner for Open MPI's coll_tuned collective algorithms")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Stage with DESTDIR, so that install-time code (the systemd units) sees the real prefix /usr.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The shared libraries' packages are computed by dpkg-shlibdeps (dpkg-dev) from the binaries
# themselves; Open MPI's launcher is added by hand (colltune runs mpirun, it does not link it).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "slurm-client")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "Measures which algorithm of Open MPI's coll_tuned is fastest for each collective, communicator\n size and message size on this machine or cluster, and writes a verified dynamic rules file.\n Includes the daemon (REST API and dashboard), a bundled OSU-compatible benchmark, the\n algorithm tracer, man pages, bash completion and systemd units.")
include(CPack)
