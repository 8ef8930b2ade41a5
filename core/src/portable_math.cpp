#include "bulkgnn/core/portable_math.hpp"

// Compiled with -ffp-contract=off (core/CMakeLists.txt), so that no build,
// whatever its -march, fuses a product and a sum here.
namespace bulkgnn {

double portable_log(double x) { return detail::portable_log_body(x); }

double portable_exp(double x) { return detail::portable_exp_body(x); }

}  // namespace bulkgnn
