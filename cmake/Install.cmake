# The installed layout (docs/install.md), the one core/install_layout.h looks up from the
# running binary; cmake/BuildTreeLayout.cmake mirrors it in the build folder.
#
#   <bindir>/colltune
#   <libexecdir>/colltune/osu/{colltune-osu-bench, osu_bcast, osu_allreduce, ...}
#   <libdir>/colltune/libcolltune_tracer.so
#   <datadir>/colltune/{web, sim-profiles}
#   <mandir>/man1/colltune*.1, <datadir>/bash-completion/completions/colltune
#   <prefix>/lib/systemd/system/colltune{,-retune,-sentinel}.{service,timer}
#   <docdir>/{README.md, install.md, daemon.md, examples/}
set(COLLTUNE_INSTALL_OSU_DIR ${CMAKE_INSTALL_LIBEXECDIR}/colltune/osu)

install(TARGETS colltune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS colltune-osu-bench RUNTIME DESTINATION ${COLLTUNE_INSTALL_OSU_DIR})
foreach(collective IN LISTS COLLTUNE_OSU_BENCH_COLLECTIVES)
  install(CODE "file(CREATE_LINK colltune-osu-bench
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${COLLTUNE_INSTALL_OSU_DIR}/osu_${collective}\" SYMBOLIC)")
endforeach()
install(TARGETS colltune_tracer LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/colltune)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/runner/sim/profiles/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/colltune/sim-profiles FILES_MATCHING PATTERN "*.json")
# The dashboard, when it was built (web-dashboard target; node and npm needed). Without it the
# daemon answers / with a page saying how to get it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/web/dist/ DESTINATION ${CMAKE_INSTALL_DATADIR}/colltune/web
  OPTIONAL)

# Generated from the CLI's own command tree by colltune-docgen (cli/CMakeLists.txt).
install(DIRECTORY ${COLLTUNE_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  FILES_MATCHING PATTERN "*.1")
install(FILES ${COLLTUNE_COMPLETION_FILE}
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# systemd units, written at install time for the prefix they are installed under (the .deb
# stages with prefix /usr, `make install PREFIX=/opt/colltune` with its own).
foreach(unit colltune.service colltune-retune.service colltune-retune.timer
             colltune-sentinel.service colltune-sentinel.timer)
  install(CODE "set(COLLTUNE_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
    configure_file(\"${PROJECT_SOURCE_DIR}/packaging/systemd/${unit}.in\"
      \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/${unit}\" @ONLY)
    message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/${unit}\")")
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/install.md
              ${PROJECT_SOURCE_DIR}/docs/daemon.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
