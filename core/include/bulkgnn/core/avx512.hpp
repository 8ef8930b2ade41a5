#pragma once

// Brackets code that uses AVX-512 intrinsics. GCC 12 flags the deliberately
// undefined source operands inside its own intrinsics (avx512fintrin.h) as
// uninitialised once they are inlined into our functions.
#if defined(__clang__)
#define BULKGNN_AVX512_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#else
#define BULKGNN_AVX512_BEGIN                                                           \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#endif
#define BULKGNN_AVX512_END _Pragma("GCC diagnostic pop")
