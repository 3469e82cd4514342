// Can the H200 co-schedule 8 clusters of 16 blocks at one block per SM? And what a cluster barrier + DSMEM costs.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__device__ unsigned long long now() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__device__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %smid;" : "=r"(s)); return s; }
__device__ unsigned cta_rank() { unsigned r; asm volatile("mov.u32 %0, %cluster_ctarank;" : "=r"(r)); return r; }
__device__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ float remote_load(const float* local, unsigned rank) {
  unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(local)), r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(r) : "memory");
  return v;
}

__global__ void probe(unsigned long long* rec, int spin_ns, int cluster) {
  extern __shared__ float sm[];
  const unsigned long long t0 = now();
  if (threadIdx.x < 64) sm[threadIdx.x] = blockIdx.x + threadIdx.x;
  while (now() - t0 < (unsigned long long)spin_ns) {}
  const unsigned long long t1 = now();
  cluster_sync();
  const unsigned long long t2 = now();
  float acc = 0;
  if (threadIdx.x < 32) for (int k = 0; k < cluster; ++k) acc += remote_load(sm + threadIdx.x, k);
  const unsigned long long t3 = now();
  cluster_sync();
  const unsigned long long t4 = now();
  if (threadIdx.x == 0) {
    unsigned long long* r = rec + 8 * (blockIdx.y * gridDim.x + blockIdx.x);
    r[0] = t0; r[1] = t1; r[2] = t2; r[3] = t3; r[4] = t4; r[5] = smid(); r[6] = cta_rank(); r[7] = (unsigned long long)acc;
  }
}

int main() {
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  for (int threads : {128, 256}) for (int smem_kb : {75, 150}) for (int cluster : {2, 4, 8, 16}) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(cluster * 8, 1); cfg.blockDim = dim3(threads); cfg.dynamicSmemBytes = smem_kb * 1024;
    cudaLaunchAttribute at = {}; at.id = cudaLaunchAttributeClusterDimension; at.val.clusterDim.x = cluster; at.val.clusterDim.y = 1; at.val.clusterDim.z = 1;
    cfg.attrs = &at; cfg.numAttrs = 1;
    int clusters = -1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, probe, &cfg);
    std::printf("threads %d smem %d KB cluster %2d: max active clusters %d (%s)\n", threads, smem_kb, cluster, clusters, cudaGetErrorString(e));
  }
  // 8 clusters of 16 blocks (256 threads, 150 KB) and 16 of 16 (128 threads, 75 KB): do they all start at once?
  for (int pass = 0; pass < 2; ++pass) for (int cfgi = 0; cfgi < 4; ++cfgi) {
    const int T[4][4] = {{256,150,16,8},{128,75,16,16},{128,75,8,32},{256,150,8,16}};
    const int threads = T[cfgi][0], smem_kb = T[cfgi][1], cluster = T[cfgi][2], nclusters = T[cfgi][3];
    const int blocks = cluster * nclusters;
    unsigned long long* rec; CK(cudaMalloc(&rec, blocks * 64));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks, 1); cfg.blockDim = dim3(threads); cfg.dynamicSmemBytes = smem_kb * 1024;
    cudaLaunchAttribute at = {}; at.id = cudaLaunchAttributeClusterDimension; at.val.clusterDim.x = cluster; at.val.clusterDim.y = 1; at.val.clusterDim.z = 1;
    cfg.attrs = &at; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, probe, rec, 30000, cluster));
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> h(blocks * 8);
    CK(cudaMemcpy(h.data(), rec, blocks * 64, cudaMemcpyDeviceToHost));
    unsigned long long first = ~0ull, last_start = 0, last_end = 0;
    std::vector<int> per_sm(200, 0);
    double sync1 = 0, loads = 0, sync2 = 0;
    for (int b = 0; b < blocks; ++b) {
      const unsigned long long* r = &h[8 * b];
      first = std::min(first, r[0]); last_start = std::max(last_start, r[0]); last_end = std::max(last_end, r[4]);
      per_sm[r[5]]++;
      sync1 = std::max(sync1, double(r[2] - r[1])); loads = std::max(loads, double(r[3] - r[2])); sync2 = std::max(sync2, double(r[4] - r[3]));
    }
    int sms = 0, maxper = 0; for (int c : per_sm) { sms += c > 0; maxper = std::max(maxper, c); }
    std::printf("pass %d: %d clusters of %d, %d threads, %d KB: starts spread %.1f us, end %.1f us after first start; %d SMs used, max %d blocks/SM; worst first sync (after spin) %.2f us, %d remote loads %.2f us, second sync %.2f us\n",
                pass, nclusters, cluster, threads, smem_kb, (last_start - first) / 1e3, (last_end - first) / 1e3, sms, maxper, sync1 / 1e3, cluster, loads / 1e3, sync2 / 1e3);
    cudaFree(rec);
  }
  return 0;
}
