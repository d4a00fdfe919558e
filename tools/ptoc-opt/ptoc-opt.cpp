// ptoc-opt: the pass driver. All behaviour lives in the library's OptMain.
#include "ptoc/session/OptMain.h"

int main(int argc, char **argv) { return ptoc::session::optMain(argc, argv); }
