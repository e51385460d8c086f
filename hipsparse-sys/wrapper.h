/* hipSPARSE's header, under the path it has in every packaged version (hipsparse/hipsparse.h). */
#include <hipsparse/hipsparse.h>
