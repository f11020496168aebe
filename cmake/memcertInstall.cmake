# install(): the public headers, every library made by memcert_add_library(), the memcert executable,
# the CMake package (memcertConfig.cmake, memcertConfigVersion.cmake, memcertTargets.cmake) and memcert.pc.
include(CMakePackageConfigHelpers)
set(MEMCERT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/memcert)

install(DIRECTORY include/memcert DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/memcert/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/memcert)
install(TARGETS ${MEMCERT_EXPORTED_TARGETS} EXPORT memcertTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/memcert-objects
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS memcert EXPORT memcertTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT memcertTargets NAMESPACE memcert:: DESTINATION ${MEMCERT_CMAKE_DIR})

configure_package_config_file(cmake/memcertConfig.cmake.in ${PROJECT_BINARY_DIR}/memcertConfig.cmake
                              INSTALL_DESTINATION ${MEMCERT_CMAKE_DIR})
# Before 1.0 a minor version may change the API: only the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/memcertConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/memcertConfig.cmake ${PROJECT_BINARY_DIR}/memcertConfigVersion.cmake
              cmake/memcertDependencies.cmake
        DESTINATION ${MEMCERT_CMAKE_DIR})

# pkg-config: the static libraries in dependency order (the proofs' claims need the CMake package).
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
set(MEMCERT_PC_LIBS "-lmemcert_mahdavi -lmemcert_ks -lmemcert_checker -lmemcert_core")
configure_file(cmake/memcert.pc.in ${PROJECT_BINARY_DIR}/memcert.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/memcert.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
