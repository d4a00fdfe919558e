// ptoc: run / profile / tune compiled operators. All behaviour lives in the library.
#include "ptoc/session/PtocMain.h"

int main(int argc, char **argv) { return ptoc::session::ptocMain(argc, argv); }
