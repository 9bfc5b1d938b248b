# perfkit_module(NAME SOURCES... [DEPS mod...] [PRIVATE_DEPS mod...] [LIBS lib...]
#                [PRIVATE_LIBS lib...])
# One static library per folder of src/. DEPS are the perfkit modules below
# this one that its headers include (linked PUBLIC); PRIVATE_DEPS those only
# its sources include (linked PRIVATE).
#
# Each module gets an include root of its own, build/include/NAME, holding
# one link, NAME -> src/NAME. A source sees the roots of its own module and of
# the modules it links (and, through PUBLIC links, what their headers need),
# so `#include "other/x.h"` of a module not linked fails to compile. The
# declared graph is written to build/module_deps.txt, which tests/layering.sh
# holds against every include.
function(perfkit_include_root target name)
  set(root ${PROJECT_BINARY_DIR}/include/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${name} ${root}/${name} SYMBOLIC)
  # Installed, every module's headers are under include/perfkit/NAME.
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}>
                                              $<INSTALL_INTERFACE:include/perfkit>)
endfunction()

function(perfkit_module name)
  cmake_parse_arguments(PM "" "" "SOURCES;DEPS;PRIVATE_DEPS;LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(perfkit_${name} STATIC ${PM_SOURCES})
  perfkit_include_root(perfkit_${name} ${name})
  foreach(dep IN LISTS PM_DEPS)
    target_link_libraries(perfkit_${name} PUBLIC perfkit_${dep})
  endforeach()
  foreach(dep IN LISTS PM_PRIVATE_DEPS)
    target_link_libraries(perfkit_${name} PRIVATE perfkit_${dep})
  endforeach()
  target_link_libraries(perfkit_${name} PUBLIC ${PM_LIBS} PRIVATE ${PM_PRIVATE_LIBS})
  list(JOIN PM_DEPS " " pub)
  list(JOIN PM_PRIVATE_DEPS " " priv)
  set_property(GLOBAL APPEND PROPERTY PERFKIT_MODULE_DEPS "${name}: ${pub} | ${priv}")
  set_property(GLOBAL APPEND PROPERTY PERFKIT_MODULES ${name})
endfunction()

# Writes the declared module graph, one "name: public deps | private deps"
# line per module in the order they were declared (bottom up).
function(perfkit_write_module_graph file)
  get_property(lines GLOBAL PROPERTY PERFKIT_MODULE_DEPS)
  list(JOIN lines "\n" text)
  file(WRITE ${file} "${text}\n")
endfunction()
