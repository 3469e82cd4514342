// Prints the 64-bit L2 cache policies createpolicy makes on this GPU, to compare with constants.
#include <cstdio>
#include <cstdint>
__global__ void probe(std::uint64_t* out) {
  std::uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p)); out[0] = p;
  asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p)); out[1] = p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); out[2] = p;
  asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(p)); out[3] = p;
}
int main() {
  std::uint64_t* d; cudaMalloc(&d, 32); probe<<<1, 1>>>(d);
  std::uint64_t h[4]; cudaMemcpy(h, d, 32, cudaMemcpyDeviceToHost);
  const char* names[4] = {"evict_first", "evict_normal", "evict_last", "evict_unchanged"};
  for (int i = 0; i < 4; ++i) std::printf("%s 0x%016llx\n", names[i], (unsigned long long)h[i]);
  return cudaGetLastError() != cudaSuccess;
}
