# perfkit_module(NAME SOURCES... [DEPS mod...] [LIBS lib...])
# One static library per module. DEPS are the perfkit modules below this one;
# tests/layering_test checks that sources include only headers of those modules.
function(perfkit_module name)
  cmake_parse_arguments(PM "" "" "SOURCES;DEPS;LIBS" ${ARGN})
  add_library(perfkit_${name} STATIC ${PM_SOURCES})
  target_include_directories(perfkit_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  foreach(dep IN LISTS PM_DEPS)
    target_link_libraries(perfkit_${name} PUBLIC perfkit_${dep})
  endforeach()
  target_link_libraries(perfkit_${name} PUBLIC ${PM_LIBS})
  set_property(GLOBAL APPEND PROPERTY PERFKIT_MODULE_DEPS "${name}:${PM_DEPS}")
endfunction()
