#include "bulkgnn/data/dataset.hpp"
