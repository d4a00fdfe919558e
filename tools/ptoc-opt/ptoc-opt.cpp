// ptoc-opt: the pass driver. All behaviour lives in the library's OptMain.
#include "ptoc/tools/OptMain.h"

int main(int argc, char **argv) { return ptoc::tools::optMain(argc, argv); }
