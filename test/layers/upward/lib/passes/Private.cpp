// A fixture for cmake/CheckLayers.cmake (never compiled): another folder's private header.
#include "../runtime/Bound.h"
