/* hipBLASLt's header, under the path it has in every packaged version (hipblaslt/hipblaslt.h). C++ only:
 * it includes <memory>, <regex> and <vector>, and its structs have default member initializers. */
#include <hipblaslt/hipblaslt.h>
