/* hipFFT's header, under the path it has in every packaged version (hipfft/hipfft.h). */
#include <hipfft/hipfft.h>
