/* hipSOLVER's header, under the path it has in every packaged version (hipsolver/hipsolver.h). */
#include <hipsolver/hipsolver.h>
