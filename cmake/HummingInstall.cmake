# Install rules and the package configuration (see the top-level
# CMakeLists.txt). Included after every library is defined.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/Humming
                  ${PROJECT_SOURCE_DIR}/include/humming-c
  DESTINATION include
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/Humming
  DESTINATION include
  FILES_MATCHING PATTERN "*.h.inc" PATTERN "*.h")

# The libraries add_mlir_library does not install.
install(TARGETS HummingQuant HummingTarget HummingRuntime HummingAPI humming
  EXPORT MLIRTargets
  LIBRARY DESTINATION lib
  ARCHIVE DESTINATION lib
  INCLUDES DESTINATION include)

# The command-line tools (OPTIONAL: add_mlir_tool leaves them out of the
# default target; a build that made them installs them).
install(TARGETS humming-opt humming-translate humming-inspect
  RUNTIME DESTINATION bin
  OPTIONAL)

set(HUMMING_CMAKE_DIR lib/cmake/humming)
install(EXPORT MLIRTargets
  NAMESPACE Humming::
  FILE HummingTargets.cmake
  DESTINATION ${HUMMING_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/HummingConfig.cmake.in
  ${PROJECT_BINARY_DIR}/HummingConfig.cmake
  INSTALL_DESTINATION ${HUMMING_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/HummingConfigVersion.cmake
  VERSION ${HUMMING_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/HummingConfig.cmake
              ${PROJECT_BINARY_DIR}/HummingConfigVersion.cmake
  DESTINATION ${HUMMING_CMAKE_DIR})
