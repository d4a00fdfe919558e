# `cmake --install` for embedders: the layer libraries, the public headers, the tools,
# and a CMake package so a consumer writes find_package(ptoc CONFIG) and links ptoc::ptoc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The public headers are C++20, so a consumer of ptoc::ptoc must compile as C++20 too.
target_compile_features(ptoc INTERFACE cxx_std_20)

set(PTOC_INSTALL_LIBRARIES
  ptoc_support ptoc_target ptoc_ir ptoc_analysis ptoc_passes ptoc_codegen ptoc_runtime ptoc_profile ptoc_tune ptoc_calibrate ptoc_session ptoc_tools)
set(PTOC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptoc)

# INCLUDES DESTINATION adds <prefix>/include to the exported targets' include dirs;
# LLVM's include dir is added back by ptocConfig.cmake from the consumer's own
# find_dependency(LLVM) (the build tree's copy is BUILD_INTERFACE only).
install(TARGETS ${PTOC_INSTALL_LIBRARIES} ptoc
  EXPORT ptocTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Headers: every public header and the op table (Ops.def). The generated
# Presets.inc is included only by lib/target, so it is not installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ptoc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.def")

install(TARGETS ptoc-opt ptoc-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT ptocTargets
  NAMESPACE ptoc::
  DESTINATION ${PTOC_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/ptocConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/ptocConfig.cmake
  INSTALL_DESTINATION ${PTOC_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor is compatible.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/ptocConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/ptocConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/ptocConfigVersion.cmake
  DESTINATION ${PTOC_INSTALL_CMAKEDIR})
