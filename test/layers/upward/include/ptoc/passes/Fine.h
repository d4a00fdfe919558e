// A fixture for cmake/CheckLayers.cmake (never compiled): passes may use ir and below.
#pragma once
#include "ptoc/ir/Func.h"
#include "ptoc/support/ReadFile.h"
