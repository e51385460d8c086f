// A kernel library of a few hundred lines for compile-time benchmarks: reductions, scans, a tiled matrix
// multiply, softmax, layer norm, a histogram, a stencil and a bitonic sort step, with templates
// instantiated for several types. Plain HIP C++ without includes, so HIPRTC (AMD) and NVRTC (NVIDIA)
// both compile it.

#define TILE 16
#define BLOCK 256

template <typename T>
struct Sum {
    __device__ static T identity() { return T(0); }
    __device__ static T apply(T a, T b) { return a + b; }
};

template <typename T>
struct Max {
    __device__ static T identity() { return T(-1e30); }
    __device__ static T apply(T a, T b) { return a > b ? a : b; }
};

template <typename T>
struct Min {
    __device__ static T identity() { return T(1e30); }
    __device__ static T apply(T a, T b) { return a < b ? a : b; }
};

template <typename T, typename Op>
__device__ T block_reduce(T value, T* shared) {
    unsigned int t = threadIdx.x;
    shared[t] = value;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) shared[t] = Op::apply(shared[t], shared[t + s]);
        __syncthreads();
    }
    T result = shared[0];
    __syncthreads();
    return result;
}

template <typename T, typename Op>
__device__ void reduce(const T* in, T* out, unsigned int n) {
    __shared__ T shared[BLOCK];
    T acc = Op::identity();
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        acc = Op::apply(acc, in[i]);
    }
    T r = block_reduce<T, Op>(acc, shared);
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}

template <typename T>
__device__ void inclusive_scan_block(const T* in, T* out, T* block_sums, unsigned int n) {
    __shared__ T temp[2 * BLOCK];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    int pout = 0, pin = 1;
    temp[t] = i < n ? in[i] : T(0);
    __syncthreads();
    for (unsigned int offset = 1; offset < blockDim.x; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (t >= offset)
            temp[pout * BLOCK + t] = temp[pin * BLOCK + t] + temp[pin * BLOCK + t - offset];
        else
            temp[pout * BLOCK + t] = temp[pin * BLOCK + t];
        __syncthreads();
    }
    if (i < n) out[i] = temp[pout * BLOCK + t];
    if (t == blockDim.x - 1 && block_sums) block_sums[blockIdx.x] = temp[pout * BLOCK + t];
}

template <typename T>
__device__ void add_block_offsets(T* data, const T* block_sums, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) data[i] += block_sums[blockIdx.x - 1];
}

template <typename T>
__device__ void matmul_tiled(const T* a, const T* b, T* c, unsigned int m, unsigned int n, unsigned int k) {
    __shared__ T as[TILE][TILE];
    __shared__ T bs[TILE][TILE];
    unsigned int row = blockIdx.y * TILE + threadIdx.y;
    unsigned int col = blockIdx.x * TILE + threadIdx.x;
    T acc = T(0);
    for (unsigned int tile = 0; tile < (k + TILE - 1) / TILE; ++tile) {
        unsigned int ak = tile * TILE + threadIdx.x;
        unsigned int bk = tile * TILE + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? a[row * k + ak] : T(0);
        bs[threadIdx.y][threadIdx.x] = (bk < k && col < n) ? b[bk * n + col] : T(0);
        __syncthreads();
#pragma unroll
        for (unsigned int e = 0; e < TILE; ++e) acc += as[threadIdx.y][e] * bs[e][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}

template <typename T>
__device__ void transpose(const T* in, T* out, unsigned int rows, unsigned int cols) {
    __shared__ T tile[TILE][TILE + 1];
    unsigned int x = blockIdx.x * TILE + threadIdx.x;
    unsigned int y = blockIdx.y * TILE + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

__device__ float fast_exp(float x) {
    // exp through 2^x with a polynomial for the fraction; accurate to about 1e-4 on [-80, 80].
    float t = x * 1.44269504f;
    float fi = floorf(t);
    float f = t - fi;
    float p = 1.0f + f * (0.69314718f + f * (0.24022650f + f * (0.05550411f + f * 0.00961813f)));
    int e = (int)fi;
    if (e < -126) return 0.0f;
    if (e > 127) return 3.4e38f;
    return p * __int_as_float((e + 127) << 23);
}

template <typename T>
__device__ void softmax_rows(const T* in, T* out, unsigned int cols) {
    __shared__ T shared[BLOCK];
    const T* row_in = in + blockIdx.x * cols;
    T* row_out = out + blockIdx.x * cols;
    T m = Max<T>::identity();
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) m = Max<T>::apply(m, row_in[c]);
    m = block_reduce<T, Max<T> >(m, shared);
    T s = T(0);
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) {
        T e = (T)fast_exp((float)(row_in[c] - m));
        row_out[c] = e;
        s += e;
    }
    s = block_reduce<T, Sum<T> >(s, shared);
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) row_out[c] /= s;
}

template <typename T>
__device__ void layer_norm(const T* in, const T* gamma, const T* beta, T* out, unsigned int cols, T eps) {
    __shared__ T shared[BLOCK];
    const T* x = in + blockIdx.x * cols;
    T* y = out + blockIdx.x * cols;
    T sum = T(0);
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) sum += x[c];
    T mean = block_reduce<T, Sum<T> >(sum, shared) / (T)cols;
    T var = T(0);
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) {
        T d = x[c] - mean;
        var += d * d;
    }
    var = block_reduce<T, Sum<T> >(var, shared) / (T)cols;
    T inv = (T)rsqrtf((float)(var + eps));
    for (unsigned int c = threadIdx.x; c < cols; c += blockDim.x) y[c] = (x[c] - mean) * inv * gamma[c] + beta[c];
}

__global__ void histogram256(const unsigned char* data, unsigned int* bins, unsigned int n) {
    __shared__ unsigned int local[256];
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }
    __syncthreads();
    for (unsigned int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

template <typename T, int R>
__device__ void stencil_1d(const T* in, T* out, const T* weights, unsigned int n) {
    __shared__ T tile[BLOCK + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    tile[l] = g < (int)n ? in[g] : T(0);
    if (threadIdx.x < R) {
        int left = g - R;
        int right = g + BLOCK;
        tile[l - R] = left >= 0 ? in[left] : T(0);
        tile[l + BLOCK] = right < (int)n ? in[right] : T(0);
    }
    __syncthreads();
    T acc = T(0);
#pragma unroll
    for (int o = -R; o <= R; ++o) acc += weights[o + R] * tile[l + o];
    if (g < (int)n) out[g] = acc;
}

template <typename T>
__device__ void bitonic_step(T* data, unsigned int j, unsigned int k) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int ixj = i ^ j;
    if (ixj > i) {
        bool ascending = (i & k) == 0;
        T a = data[i];
        T b = data[ixj];
        if ((a > b) == ascending) {
            data[i] = b;
            data[ixj] = a;
        }
    }
}

template <typename T>
__device__ void saxpy_strided(T a, const T* x, T* y, unsigned int n, unsigned int stride) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i * stride] = a * x[i * stride] + y[i * stride];
    }
}

template <typename T>
__device__ void conv2d_3x3(const T* in, T* out, const T* k, unsigned int w, unsigned int h) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    T acc = T(0);
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            int sx = (int)x + dx;
            int sy = (int)y + dy;
            sx = sx < 0 ? 0 : (sx >= (int)w ? (int)w - 1 : sx);
            sy = sy < 0 ? 0 : (sy >= (int)h ? (int)h - 1 : sy);
            acc += k[(dy + 1) * 3 + (dx + 1)] * in[sy * w + sx];
        }
    }
    out[y * w + x] = acc;
}

__device__ unsigned int xorshift(unsigned int s) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

__global__ void monte_carlo_pi(unsigned int* hits, unsigned int samples_per_thread, unsigned int seed) {
    __shared__ unsigned int shared[BLOCK];
    unsigned int s = seed ^ (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u;
    unsigned int count = 0;
    for (unsigned int i = 0; i < samples_per_thread; ++i) {
        s = xorshift(s);
        float x = (s & 0xffff) / 65536.0f;
        float y = (s >> 16) / 65536.0f;
        count += (x * x + y * y <= 1.0f) ? 1u : 0u;
    }
    unsigned int total = block_reduce<unsigned int, Sum<unsigned int> >(count, shared);
    if (threadIdx.x == 0) atomicAdd(hits, total);
}

template <typename T>
__device__ void gather(const T* in, const unsigned int* index, T* out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[index[i]];
}

template <typename T>
__device__ void scatter_add(const T* in, const unsigned int* index, T* out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&out[index[i]], in[i]);
}

// Instantiations with C names, as a library would export them.
extern "C" {
__global__ void reduce_sum_f32(const float* in, float* out, unsigned int n) { reduce<float, Sum<float> >(in, out, n); }
__global__ void reduce_max_f32(const float* in, float* out, unsigned int n) { reduce<float, Max<float> >(in, out, n); }
__global__ void reduce_min_f32(const float* in, float* out, unsigned int n) { reduce<float, Min<float> >(in, out, n); }
__global__ void reduce_sum_f64(const double* in, double* out, unsigned int n) { reduce<double, Sum<double> >(in, out, n); }
__global__ void reduce_sum_i32(const int* in, int* out, unsigned int n) { reduce<int, Sum<int> >(in, out, n); }
__global__ void scan_f32(const float* in, float* out, float* sums, unsigned int n) { inclusive_scan_block<float>(in, out, sums, n); }
__global__ void scan_i32(const int* in, int* out, int* sums, unsigned int n) { inclusive_scan_block<int>(in, out, sums, n); }
__global__ void scan_fix_f32(float* data, const float* sums, unsigned int n) { add_block_offsets<float>(data, sums, n); }
__global__ void matmul_f32(const float* a, const float* b, float* c, unsigned int m, unsigned int n, unsigned int k) { matmul_tiled<float>(a, b, c, m, n, k); }
__global__ void matmul_f64(const double* a, const double* b, double* c, unsigned int m, unsigned int n, unsigned int k) { matmul_tiled<double>(a, b, c, m, n, k); }
__global__ void transpose_f32(const float* in, float* out, unsigned int r, unsigned int c) { transpose<float>(in, out, r, c); }
__global__ void softmax_f32(const float* in, float* out, unsigned int cols) { softmax_rows<float>(in, out, cols); }
__global__ void layer_norm_f32(const float* in, const float* g, const float* b, float* out, unsigned int cols, float eps) { layer_norm<float>(in, g, b, out, cols, eps); }
__global__ void stencil3_f32(const float* in, float* out, const float* w, unsigned int n) { stencil_1d<float, 3>(in, out, w, n); }
__global__ void stencil8_f32(const float* in, float* out, const float* w, unsigned int n) { stencil_1d<float, 8>(in, out, w, n); }
__global__ void bitonic_f32(float* data, unsigned int j, unsigned int k) { bitonic_step<float>(data, j, k); }
__global__ void bitonic_u32(unsigned int* data, unsigned int j, unsigned int k) { bitonic_step<unsigned int>(data, j, k); }
__global__ void saxpy_f32(float a, const float* x, float* y, unsigned int n, unsigned int s) { saxpy_strided<float>(a, x, y, n, s); }
__global__ void conv3x3_f32(const float* in, float* out, const float* k, unsigned int w, unsigned int h) { conv2d_3x3<float>(in, out, k, w, h); }
__global__ void gather_f32(const float* in, const unsigned int* idx, float* out, unsigned int n) { gather<float>(in, idx, out, n); }
__global__ void scatter_add_f32(const float* in, const unsigned int* idx, float* out, unsigned int n) { scatter_add<float>(in, idx, out, n); }
}
