# Checks DESIGN.md's layer rule: a file of layer L (lib/L/*, include/ptoc/L/*) includes
# ptoc headers of L and of the layers below it only, and never another layer's private
# headers (`#include "../other/..."`).
#
#   cmake -DROOT=<source dir> -DLAYERS="support;target;..." -P CheckLayers.cmake
#
# LAYERS lists the layers bottom-up (lib/CMakeLists.txt declares it once). Every
# violation is listed; the script fails if there is any.
if(NOT ROOT OR NOT LAYERS)
  message(FATAL_ERROR "CheckLayers.cmake needs -DROOT=<source dir> and -DLAYERS=<layers, bottom-up>")
endif()

set(violations "")
list(LENGTH LAYERS count)
math(EXPR last "${count} - 1")
foreach(index RANGE ${last})
  list(GET LAYERS ${index} layer)
  # The layers this one may use: everything below it and itself.
  math(EXPR usable "${index} + 1")
  list(SUBLIST LAYERS 0 ${usable} allowedLayers)
  string(REPLACE ";" ", " allowed "${allowedLayers}")
  file(GLOB_RECURSE files
    "${ROOT}/lib/${layer}/*.h" "${ROOT}/lib/${layer}/*.cpp" "${ROOT}/lib/${layer}/*.inc"
    "${ROOT}/include/ptoc/${layer}/*.h" "${ROOT}/include/ptoc/${layer}/*.inc")
  foreach(file ${files})
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    file(RELATIVE_PATH shown "${ROOT}" "${file}")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]*)\".*$" "\\1" header "${line}")
      if(header MATCHES "^ptoc/([A-Za-z0-9_]+)/")
        set(used "${CMAKE_MATCH_1}")
        list(FIND LAYERS "${used}" usedIndex)
        if(usedIndex GREATER index)
          list(APPEND violations
               "${shown} (layer ${layer}) includes ${header}, of the higher layer ${used}: ${layer} may use only ${allowed} (move the code down, or pass in what it needs)")
        endif()
      elseif(header MATCHES "^\\.\\./")
        list(APPEND violations
             "${shown} includes ${header}, another folder's private header: move what it needs into include/ptoc/")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  foreach(v ${violations})
    message(NOTICE "layer violation: ${v}")
  endforeach()
  list(LENGTH violations n)
  string(REPLACE ";" " <- " order "${LAYERS}")
  message(FATAL_ERROR "${n} layer violation(s) of DESIGN.md's order ${order}")
endif()
