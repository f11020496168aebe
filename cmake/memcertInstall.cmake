# install(): the public headers (memcert/memcert.hpp, memcert/eigen.hpp and the memcert headers they include),
# every library made by memcert_add_library(), the memcert executable,
# the CMake package (memcertConfig.cmake, memcertConfigVersion.cmake, memcertTargets.cmake) and memcert.pc.
include(CMakePackageConfigHelpers)
set(MEMCERT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/memcert)

# The public headers: the two entry points and, transitively, every memcert header they include. The
# engine's other headers (the SIMD kernels, attention batches, threading helpers) stay in the source tree.
set(memcert_header_queue memcert/memcert.hpp memcert/eigen.hpp)
set(MEMCERT_PUBLIC_HEADERS "")
while(memcert_header_queue)
  list(POP_FRONT memcert_header_queue header)
  if(header IN_LIST MEMCERT_PUBLIC_HEADERS OR header STREQUAL "memcert/version.hpp")  # generated, below
    continue()
  endif()
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/include/${header})
    message(FATAL_ERROR "a public header includes ${header}, which is not under include/")
  endif()
  list(APPEND MEMCERT_PUBLIC_HEADERS ${header})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/${header})
  file(STRINGS ${PROJECT_SOURCE_DIR}/include/${header} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]memcert/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[^<\"]*[<\"](memcert/[^>\"]+)[>\"].*$" "\\1" included "${line}")
    list(APPEND memcert_header_queue ${included})
  endforeach()
endwhile()
foreach(header IN LISTS MEMCERT_PUBLIC_HEADERS)
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES include/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/include/memcert/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memcert)
install(TARGETS ${MEMCERT_EXPORTED_TARGETS} EXPORT memcertTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/memcert-objects
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS memcert EXPORT memcertTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT memcertTargets NAMESPACE memcert:: DESTINATION ${MEMCERT_CMAKE_DIR})
# The papers' libraries by their earlier names (memcert_add_library's FORMERLY): libmemcert_<old>.a, a
# symbolic link to libmemcert_<new>.a, so that a link line naming -lmemcert_<old> still links
# (memcertConfig.cmake makes the matching memcert::<old> targets).
foreach(pair IN LISTS MEMCERT_FORMER_NAMES)
  string(REPLACE "=" ";" pair "${pair}")
  list(GET pair 0 old)
  list(GET pair 1 new)
  set(lib_old ${CMAKE_STATIC_LIBRARY_PREFIX}memcert_${old}${CMAKE_STATIC_LIBRARY_SUFFIX})
  set(lib_new ${CMAKE_STATIC_LIBRARY_PREFIX}memcert_${new}${CMAKE_STATIC_LIBRARY_SUFFIX})
  install(CODE "
    set(memcert_libdir \"${CMAKE_INSTALL_LIBDIR}\")
    if(NOT IS_ABSOLUTE \"\${memcert_libdir}\")
      set(memcert_libdir \"\${CMAKE_INSTALL_PREFIX}/\${memcert_libdir}\")
    endif()
    message(STATUS \"Installing: \$ENV{DESTDIR}\${memcert_libdir}/${lib_old} -> ${lib_new}\")
    file(CREATE_LINK ${lib_new} \"\$ENV{DESTDIR}\${memcert_libdir}/${lib_old}\" SYMBOLIC)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${memcert_libdir}/${lib_old}\")")
endforeach()

configure_package_config_file(cmake/memcertConfig.cmake.in ${PROJECT_BINARY_DIR}/memcertConfig.cmake
                              INSTALL_DESTINATION ${MEMCERT_CMAKE_DIR})
# Before 1.0 a minor version may change the API: only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/memcertConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/memcertConfig.cmake ${PROJECT_BINARY_DIR}/memcertConfigVersion.cmake
              cmake/memcertDependencies.cmake
        DESTINATION ${MEMCERT_CMAKE_DIR})

# pkg-config: every static library in dependency order, each before the libraries it links
# (memcert_dana24 before memcert_mahdavi24; the proofs' claims, an object library, need the CMake package). Static archives carry no dependencies of their own, so everything they link (GMP, MPFR,
# zlib, threads) is on the public lines, not the .private ones, and a plain `pkg-config --libs memcert`
# links.
# The prefix is relative to the .pc file's own directory, so `cmake --install build --prefix P` gives a
# correct file for any P.
file(RELATIVE_PATH MEMCERT_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(MEMCERT_PC_PREFIX "\${pcfiledir}/${MEMCERT_PC_UP}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(MEMCERT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(MEMCERT_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(MEMCERT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(MEMCERT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
set(MEMCERT_PC_LIBS "-lmemcert_eigen -lmemcert_dana24 -lmemcert_mahdavi24 -lmemcert_ks25 -lmemcert_checker -lmemcert_core")
configure_file(cmake/memcert.pc.in ${PROJECT_BINARY_DIR}/memcert.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/memcert.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
