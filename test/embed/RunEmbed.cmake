# cmake -P script for the `embed` test: install the ptoc build in PTOC_BUILD_DIR into
# a fresh prefix under WORK_DIR, configure and build EXAMPLE_DIR against it with
# Ninja, run the example, and fail on the first step that fails.
foreach(var PTOC_BUILD_DIR EXAMPLE_DIR WORK_DIR MAKE_PROGRAM C_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RunEmbed.cmake: pass -D${var}=...")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(example_build ${WORK_DIR}/example-build)
# Fresh every run: nothing left from an earlier install or example build can mask a
# missing file or a stale configuration.
file(REMOVE_RECURSE ${prefix} ${example_build})

function(step name)
  message(STATUS "embed: ${name}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "embed: step '${name}' failed (${rc})")
  endif()
endfunction()

step(install ${CMAKE_COMMAND} --install ${PTOC_BUILD_DIR} --prefix ${prefix})
# The package files sit in <libdir>/cmake/ptoc (libdir is lib, or lib/<multiarch>
# when the build was configured for /usr).
file(GLOB_RECURSE config_file ${prefix}/ptocConfig.cmake)
if(NOT config_file)
  message(FATAL_ERROR "embed: the install has no ptocConfig.cmake")
endif()
get_filename_component(config_dir ${config_file} DIRECTORY)
foreach(f ${prefix}/include/ptoc/ptoc.h ${config_dir}/ptocConfigVersion.cmake
          ${config_dir}/ptocTargets.cmake)
  if(NOT EXISTS ${f})
    message(FATAL_ERROR "embed: the install has no ${f}")
  endif()
endforeach()

# Only the fresh prefix may provide ptoc: no package registry, no other prefixes.
step(configure ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${example_build} -G Ninja
     -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
     -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
file(STRINGS ${example_build}/CMakeCache.txt ptoc_dir REGEX "^ptoc_DIR:")
if(NOT ptoc_dir STREQUAL "ptoc_DIR:PATH=${config_dir}")
  message(FATAL_ERROR "embed: the example found ptoc at '${ptoc_dir}', not in ${prefix}")
endif()

step(build ${CMAKE_COMMAND} --build ${example_build})
step(run ${example_build}/ptoc-embed-example)
