#include "bulkgnn/data/generators.hpp"
