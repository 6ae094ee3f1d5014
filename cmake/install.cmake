# `cmake --install build --prefix P` installs the public headers, libjanus.so, libjanus_deploy.so
# and a CMake package, so that another project builds against Janus with
#   find_package(Janus REQUIRED)
#   target_link_libraries(app PRIVATE Janus::janus)          # or Janus::deploy
# tests/consumer/ is such a project; ctest builds it against an installed tree.
include(CMakePackageConfigHelpers)

set_target_properties(janus PROPERTIES EXPORT_NAME janus)
set_target_properties(janus_deploy_runtime PROPERTIES EXPORT_NAME deploy)
install(TARGETS janus janus_deploy_runtime EXPORT JanusTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/janus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(JANUS_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Janus)
install(EXPORT JanusTargets NAMESPACE Janus:: DESTINATION ${JANUS_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/JanusConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/JanusConfig.cmake
                              INSTALL_DESTINATION ${JANUS_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/JanusConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/JanusConfig.cmake ${PROJECT_BINARY_DIR}/JanusConfigVersion.cmake
        DESTINATION ${JANUS_CMAKE_DIR})
