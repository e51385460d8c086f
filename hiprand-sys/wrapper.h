/* hipRAND's host API header, under the path it has in every packaged version (hiprand/hiprand.h). */
#include <hiprand/hiprand.h>
