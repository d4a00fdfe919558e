// ptoc: run / profile / tune compiled operators. All behaviour lives in the library.
#include "ptoc/tools/PtocMain.h"

int main(int argc, char **argv) { return ptoc::tools::ptocMain(argc, argv); }
