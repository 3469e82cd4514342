// Tensor maps of the K and V pools for the tensor-core kernel's tensor copies: one instruction moves the rows of
// kTensorCopyKeys consecutive slots of a KV head, kTensorCopyLanes lanes wide, into the 128-byte swizzled layout.
#pragma once

#include <cuda.h>  // CUtensorMap, the type only: the encoder is reached through the runtime (no libcuda link)

#include "cuda/paged_attention.h"

namespace pacheck::cuda {

inline constexpr int kTensorCopyKeys = 16;   // slots per copy: one warp's keys of a tile
inline constexpr int kTensorCopyLanes = 64;  // head lanes per copy: 128 bytes of 16-bit elements, the swizzle's span

// Passed by value (__grid_constant__): the copy engine reads a map from kernel parameter space. 128-byte aligned.
struct KvTensorMaps {
  CUtensorMap k;
  CUtensorMap v;
  bool usable;  // false: the launch allows no tensor copies
};

// Whether a launch can copy warp tiles by tensor copies: the tensor-core kernel above 32 lanes, block_size and the
// (capped) tile multiples of 16 (a warp's 16 keys are then one block's consecutive slots where the item starts at a
// multiple of 16, which the kernel checks), and slot rows within the copies' signed 32-bit coordinates.
bool tensor_copies_allowed(const DeviceBatch& batch, int tile_size);

// The maps of batch's pools ({head_dim, num_kv_heads, slots} elements, box {64, 1, 16}, 128-byte swizzle, lanes past
// head_dim read as zeros), unusable where tensor_copies_allowed is false. Throws CudaError if the driver refuses.
KvTensorMaps describe_kv_pools(const DeviceBatch& batch, int tile_size);

}  // namespace pacheck::cuda
