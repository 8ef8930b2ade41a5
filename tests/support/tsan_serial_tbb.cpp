// Linked into every test program of a ThreadSanitizer build (BULKGNN_SANITIZE
// = thread): TBB runs each parallel loop on the thread that calls it.
//
// Debian's libtbb.so is not built with -fsanitize=thread, so TSan cannot see
// its scheduler hand a task to a worker and reports every read of the caller's
// data in a parallel_for body as a race. With one thread TBB starts no workers,
// and TSan checks what it can judge: bulkgnn's own threads (the loader and
// pipeline stages, the gzip reader, the buffer pool) and the data they share.
#include <tbb/global_control.h>

namespace {
const tbb::global_control serial_tbb(tbb::global_control::max_allowed_parallelism, 1);
}  // namespace
