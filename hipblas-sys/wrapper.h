/* hipBLAS's one header, under the path it has since ROCm 5.3 (hipblas/hipblas.h). The NVIDIA build made
 * by scripts/build-hipblas-nvidia.sh lays its headers out the same way. */
#include <hipblas/hipblas.h>
