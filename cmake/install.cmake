# What `cmake --install` puts where, and what cpack packs.
#
#   bin/perfkit                         the command (stripped by --strip / the package)
#   lib/libperfkit_*.a                  the library: the modules of its public surface
#   include/perfkit/MODULE/*.h          their headers
#   lib/cmake/perfkit/                  find_package(perfkit CONFIG): perfkit::perfkit
#   lib/pkgconfig/perfkit.pc            pkg-config --cflags --libs perfkit
#   share/man/man1/perfkit*.1           perfkit(1) and perfkit-COMMAND(1), from the CLI's own help
#   share/bash-completion/completions/perfkit
#
# The library's surface is deliberate: reading a recording (perfdata), the
# resolved-sample visitor (session), the profile model (profile), writing
# perf.data (perfdata::Writer) and the self-monitoring counters (capture).
# Their headers include only the modules they depend on publicly
# (tests/layering.sh holds them to it), so those are installed too; the
# modules they use privately are installed as libraries only. Static
# libraries, no libperfkit.so: the C++ API has no stable ABI to promise yet.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PERFKIT_SURFACE perfdata session profile capture)

# The surface's modules with their public dependencies (headers installed),
# and everything they link (libraries installed).
function(perfkit_closure out_headers out_libs)
  set(headers ${PERFKIT_SURFACE})
  set(libs ${PERFKIT_SURFACE})
  set(queue ${PERFKIT_SURFACE})
  while(queue)
    list(POP_FRONT queue m)
    get_target_property(pub perfkit_${m} INTERFACE_LINK_LIBRARIES)
    get_target_property(all perfkit_${m} LINK_LIBRARIES)
    foreach(dep IN LISTS all)
      if(dep MATCHES "^perfkit_(.*)$")
        set(d ${CMAKE_MATCH_1})
        if(NOT d IN_LIST libs)
          list(APPEND libs ${d})
          list(APPEND queue ${d})
        endif()
        if(m IN_LIST headers AND "${dep}" IN_LIST pub AND NOT d IN_LIST headers)
          list(APPEND headers ${d})
        endif()
      endif()
    endforeach()
  endwhile()
  # Public dependencies of header modules are header modules too.
  set(changed TRUE)
  while(changed)
    set(changed FALSE)
    foreach(m IN LISTS headers)
      get_target_property(pub perfkit_${m} INTERFACE_LINK_LIBRARIES)
      foreach(dep IN LISTS pub)
        if(dep MATCHES "^perfkit_(.*)$" AND NOT CMAKE_MATCH_1 IN_LIST headers)
          list(APPEND headers ${CMAKE_MATCH_1})
          set(changed TRUE)
        endif()
      endforeach()
    endforeach()
  endwhile()
  set(${out_headers} ${headers} PARENT_SCOPE)
  set(${out_libs} ${libs} PARENT_SCOPE)
endfunction()
perfkit_closure(header_modules library_modules)

# perfkit::perfkit: the surface in one target.
add_library(perfkit_library INTERFACE)
set_target_properties(perfkit_library PROPERTIES EXPORT_NAME perfkit)
foreach(m IN LISTS PERFKIT_SURFACE)
  target_link_libraries(perfkit_library INTERFACE perfkit_${m})
endforeach()
target_compile_features(perfkit_library INTERFACE cxx_std_20)

set(targets perfkit_library)
foreach(m IN LISTS library_modules)
  list(APPEND targets perfkit_${m})
endforeach()
install(TARGETS ${targets} EXPORT perfkitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        COMPONENT perfkit)
foreach(m IN LISTS header_modules)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/${m}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/perfkit/${m}
          COMPONENT perfkit FILES_MATCHING PATTERN "*.h" PATTERN "*_impl.h" EXCLUDE)
endforeach()
install(TARGETS perfkit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT perfkit)
# --strip (and the package) strips the binary; the static libraries lose
# their debug sections too (they are most of a RelWithDebInfo tree's size).
set(installed_archives "")
foreach(m IN LISTS library_modules)
  string(APPEND installed_archives " \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libperfkit_${m}.a\"")
endforeach()
install(CODE "
  if(CMAKE_INSTALL_DO_STRIP)
    execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug ${installed_archives})
  endif()" COMPONENT perfkit)

set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/perfkit)
install(EXPORT perfkitTargets NAMESPACE perfkit:: DESTINATION ${cmake_dir} COMPONENT perfkit)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/perfkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/perfkitConfig.cmake INSTALL_DESTINATION ${cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/perfkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/perfkitConfig.cmake ${PROJECT_BINARY_DIR}/perfkitConfigVersion.cmake
        DESTINATION ${cmake_dir} COMPONENT perfkit)

# pkg-config: the libraries in link order (a module before those it uses).
get_property(declared GLOBAL PROPERTY PERFKIT_MODULES)
list(REVERSE declared)
set(PERFKIT_PC_LIBS "")
foreach(m IN LISTS declared)
  if(m IN_LIST library_modules)
    string(APPEND PERFKIT_PC_LIBS " -lperfkit_${m}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/perfkit.pc.in ${PROJECT_BINARY_DIR}/perfkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/perfkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT perfkit)

# Manual pages and the bash completion, made from the built binary's own
# --help (the same option definitions the CLI parses).
set(doc_dir ${PROJECT_BINARY_DIR}/doc)
set(PERFKIT_COMMANDS report diff script record stat inject dump list evlist config buildid-list buildid-cache archive
    data pt-synth)
set(man_pages ${doc_dir}/man1/perfkit.1)
foreach(c IN LISTS PERFKIT_COMMANDS)
  list(APPEND man_pages ${doc_dir}/man1/perfkit-${c}.1)
endforeach()
list(JOIN PERFKIT_COMMANDS "," commands_arg)
add_custom_command(OUTPUT ${man_pages} ${doc_dir}/perfkit.bash-completion
  COMMAND ${CMAKE_COMMAND} -DPERFKIT=$<TARGET_FILE:perfkit> -DOUT=${doc_dir}
          -DCOMMANDS=${commands_arg} -DVERSION=${PROJECT_VERSION}
          -DCOMPLETION_IN=${PROJECT_SOURCE_DIR}/cmake/perfkit-completion.bash.in
          -P ${PROJECT_SOURCE_DIR}/cmake/manpages.cmake
  DEPENDS perfkit ${PROJECT_SOURCE_DIR}/cmake/manpages.cmake
          ${PROJECT_SOURCE_DIR}/cmake/perfkit-completion.bash.in
  COMMENT "Writing the manual pages and the bash completion" VERBATIM)
add_custom_target(perfkit_docs ALL DEPENDS ${man_pages} ${doc_dir}/perfkit.bash-completion)
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT perfkit)
install(FILES ${doc_dir}/perfkit.bash-completion DESTINATION
        ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME perfkit COMPONENT perfkit)

# cpack -G DEB: one package with the command, the pages, the completion and
# the library; the binary stripped; dependencies from dpkg-shlibdeps.
set(CPACK_PACKAGE_NAME perfkit)
set(CPACK_PACKAGE_VENDOR perfkit)
set(CPACK_PACKAGE_CONTACT "perfkit developers <perfkit@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Linux perf's record, report, script and more, fast, with exports")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "linux-perf, man-db, bash-completion")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
