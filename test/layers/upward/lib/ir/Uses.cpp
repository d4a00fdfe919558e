// A fixture for cmake/CheckLayers.cmake (never compiled): ir including a higher layer.
#include "ptoc/ir/Func.h"
#include "ptoc/session/Session.h"
