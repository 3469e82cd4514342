// Tensor maps of the K and V pools, for the tensor-core kernel's tensor copies (sm_90's copy engine): one
// instruction moves the rows of kTensorCopyKeys consecutive slots of one KV head, kTensorCopyLanes head lanes wide,
// into shared memory in the 128-byte swizzled layout. C++17, host and device.
#pragma once

#include <cuda.h>  // CUtensorMap, the type only: the encoder is reached through the runtime (no libcuda link)

#include "cuda/paged_attention.h"

namespace pacheck::cuda {

inline constexpr int kTensorCopyKeys = 16;   // slots per copy: one warp's keys of a tile
inline constexpr int kTensorCopyLanes = 64;  // head lanes per copy: 128 bytes of 16-bit elements, the swizzle's span

// Passed to the kernel by value (__grid_constant__): the copy engine reads a map from kernel parameter space.
struct KvTensorMaps {  // 128-byte aligned, as CUtensorMap is
  CUtensorMap k;
  CUtensorMap v;
  // False where the launch does not allow tensor copies; the kernel then copies with 16-byte asynchronous copies.
  bool usable;
};

// Whether a launch can copy whole warp tiles by tensor copies: bf16 or fp16 storage with head_dim % 8 == 0 and
// head_dim > 32 (the tensor-core kernel's 64-lane-and-wider layouts), block_size and the tile (tile_size capped at
// the kernel's 64 keys) multiples of 16, so that a warp's 16 keys of a tile are 16 consecutive slots of one block
// whenever the item starts at a multiple of 16 (which the kernel checks per item), and slot rows countable in 32
// bits (the copy's coordinates are signed 32-bit).
bool tensor_copies_allowed(const DeviceBatch& batch, int tile_size);

// The maps of batch's pools ({head_dim, num_kv_heads, num_blocks x block_size} bf16 or fp16 elements, box
// {64, 1, 16}, 128-byte swizzle, lanes past head_dim read as zeros); usable = false and nothing encoded where
// tensor_copies_allowed is false. Throws CudaError when the driver has no encoder or refuses the description.
KvTensorMaps describe_kv_pools(const DeviceBatch& batch, int tile_size);

}  // namespace pacheck::cuda
