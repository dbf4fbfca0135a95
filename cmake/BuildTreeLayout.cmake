# The build folder as an install root: links at the paths core/install_layout.h looks up
# (<root>/<libexecdir>/colltune/osu, <root>/<libdir>/colltune/libcolltune_tracer.so,
# <root>/<datadir>/colltune/{web,sim-profiles}, <root>/<docdir>/examples) pointing at the build
# outputs and the source folders. A link may dangle until its target is built (web/dist is
# built by the web-dashboard target when node is present).
set(_layout_links
  "${CMAKE_INSTALL_LIBEXECDIR}/colltune/osu|${COLLTUNE_OSU_BENCH_DIR}"
  "${CMAKE_INSTALL_LIBDIR}/colltune/libcolltune_tracer.so|${CMAKE_BINARY_DIR}/lib/libcolltune_tracer.so"
  "${CMAKE_INSTALL_DATADIR}/colltune/sim-profiles|${PROJECT_SOURCE_DIR}/runner/sim/profiles"
  "${CMAKE_INSTALL_DATADIR}/colltune/web|${PROJECT_SOURCE_DIR}/web/dist"
  "${CMAKE_INSTALL_DOCDIR}/examples|${PROJECT_SOURCE_DIR}/docs/examples")
foreach(_entry IN LISTS _layout_links)
  string(REPLACE "|" ";" _pair "${_entry}")
  list(GET _pair 0 _link)
  list(GET _pair 1 _target)
  get_filename_component(_parent "${CMAKE_BINARY_DIR}/${_link}" DIRECTORY)
  file(MAKE_DIRECTORY "${_parent}")
  file(REMOVE "${CMAKE_BINARY_DIR}/${_link}")
  file(CREATE_LINK "${_target}" "${CMAKE_BINARY_DIR}/${_link}" SYMBOLIC)
endforeach()
