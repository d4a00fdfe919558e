# clang + LLVM 14's llvm/Support/JSON.h in C++20 mode: clang rejects the installed
# header with libstdc++ 12 (llvm-project issue 55780), so a clang build compiles
# against a copy whose json::Array members are defined after json::Value (written
# here, at configure time, by cmake/llvm_json_compat.py, which explains why). Sets
# PTOC_COMPAT_INCLUDE_DIR, searched before LLVM's include dir; GCC uses the header as
# installed and leaves it empty.
set(PTOC_COMPAT_INCLUDE_DIR "")
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  find_file(PTOC_LLVM_JSON_H llvm/Support/JSON.h PATHS ${LLVM_INCLUDE_DIRS} NO_DEFAULT_PATH)
  if(NOT PTOC_LLVM_JSON_H)
    message(FATAL_ERROR "no llvm/Support/JSON.h under ${LLVM_INCLUDE_DIRS}")
  endif()
  set(PTOC_COMPAT_INCLUDE_DIR ${PROJECT_BINARY_DIR}/compat)
  set(script ${PROJECT_SOURCE_DIR}/cmake/llvm_json_compat.py)
  file(MAKE_DIRECTORY ${PTOC_COMPAT_INCLUDE_DIR}/llvm/Support)
  execute_process(
    COMMAND ${PTOC_PYTHON} ${script} ${PTOC_LLVM_JSON_H}
            ${PTOC_COMPAT_INCLUDE_DIR}/llvm/Support/JSON.h.new
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "clang cannot use ${PTOC_LLVM_JSON_H} as installed and the "
                        "compatible copy could not be written: ${err}")
  endif()
  # configure_file writes only when the text changes: a reconfigure rebuilds nothing.
  configure_file(${PTOC_COMPAT_INCLUDE_DIR}/llvm/Support/JSON.h.new
                 ${PTOC_COMPAT_INCLUDE_DIR}/llvm/Support/JSON.h COPYONLY)
  file(REMOVE ${PTOC_COMPAT_INCLUDE_DIR}/llvm/Support/JSON.h.new)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${script} ${PTOC_LLVM_JSON_H})
endif()
