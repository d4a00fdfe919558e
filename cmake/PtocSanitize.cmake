# -DPTOC_SANITIZE=address,undefined builds everything (libraries, tools, tests, the
# Python module) with clang's sanitizers; scripts/sanitize.sh configures, builds and
# runs the whole ctest suite that way (docs/reliability.md).
#
# - Any finding is fatal (-fno-sanitize-recover=all): a UBSan report fails the test
#   like an ASan one does.
# - One shared sanitizer runtime (-shared-libsan) for executables and the Python
#   module, so a process that loads both (pytest running ptoc-opt, say) has one copy.
#   Executables find it through an rpath; /usr/bin/python3 is not instrumented, so
#   the runtime must be the first library it loads: PTOC_SANITIZER_RUNTIME names it
#   for LD_PRELOAD (test/CMakeLists.txt sets it for pytest).
# - The link flags are on the `ptoc` interface, so a project linking a sanitized
#   ptoc (the embed test) links the runtime too.
#
# -DPTOC_FUZZ=ON adds libFuzzer's coverage instrumentation to every target and builds
# the fuzz targets (fuzz/, scripts/fuzz.sh); it implies address,undefined.
set(PTOC_SANITIZE "" CACHE STRING
    "Sanitizers to build with (clang only): address, undefined or address,undefined")
option(PTOC_FUZZ "Build the libFuzzer targets in fuzz/ (clang; implies PTOC_SANITIZE)" OFF)
if(PTOC_FUZZ AND NOT PTOC_SANITIZE)
  set(PTOC_SANITIZE address,undefined)
endif()
set(PTOC_SANITIZER_RUNTIME "")
set(PTOC_SANITIZER_LINK_OPTIONS "")
if(PTOC_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PTOC_SANITIZE and PTOC_FUZZ need clang (configure with CC=clang-14 "
                        "CXX=clang++-14, as scripts/sanitize.sh does); found "
                        "${CMAKE_CXX_COMPILER_ID}")
  endif()
  string(REPLACE "," ";" sanitizers "${PTOC_SANITIZE}")
  foreach(s ${sanitizers})
    if(NOT s MATCHES "^(address|undefined)$")
      message(FATAL_ERROR "PTOC_SANITIZE: '${s}' is not supported; use address, "
                          "undefined or address,undefined")
    endif()
  endforeach()
  if("address" IN_LIST sanitizers)
    set(runtime_name libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
  else()
    set(runtime_name libclang_rt.ubsan_standalone-${CMAKE_SYSTEM_PROCESSOR}.so)
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${runtime_name}
                  OUTPUT_VARIABLE PTOC_SANITIZER_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT EXISTS "${PTOC_SANITIZER_RUNTIME}")
    message(FATAL_ERROR "PTOC_SANITIZE: ${CMAKE_CXX_COMPILER} has no ${runtime_name} "
                        "(install libclang-rt-14-dev: scripts/install-deps.sh)")
  endif()
  get_filename_component(runtime_dir ${PTOC_SANITIZER_RUNTIME} DIRECTORY)

  add_compile_options(-fsanitize=${PTOC_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  if(PTOC_FUZZ)
    # Coverage for libFuzzer in every library; fuzz/ links libFuzzer's main. The
    # runtime is static here: a libFuzzer link puts libstdc++ ahead of a shared
    # sanitizer runtime, which must come first. (A fuzz build is not for pytest.)
    add_compile_options(-fsanitize=fuzzer-no-link)
    set(PTOC_SANITIZER_LINK_OPTIONS -fsanitize=${PTOC_SANITIZE})
  else()
    set(PTOC_SANITIZER_LINK_OPTIONS -fsanitize=${PTOC_SANITIZE} -shared-libsan
                                    -Wl,-rpath,${runtime_dir})
  endif()
  add_link_options(${PTOC_SANITIZER_LINK_OPTIONS})
  message(STATUS "ptoc: sanitizers ${PTOC_SANITIZE}; runtime ${PTOC_SANITIZER_RUNTIME}")
endif()
