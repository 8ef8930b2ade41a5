"""Host memory stays flat over many epochs: minibatches, their arrays and
feature buffers are all given back (a top complaint of PyG and DGL users)."""

import os
import unittest

import numpy as np

import bulkgnn
from support import CORA

MiB = 2**20


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class ResidentMemory(unittest.TestCase):
    def test_flat_over_50_epochs(self):
        ds = bulkgnn.Dataset(CORA)
        loader = bulkgnn.NeighborLoader(ds, np.arange(ds.num_nodes), fanouts=[10, 10],
                                        batch_size=128, bulk=4, prefetch=4)
        by_epoch = []
        largest = 0
        for _ in range(50):
            for mb in loader:
                x = np.from_dlpack(mb.features)  # about 5.7 MiB a minibatch
                float(x.sum())
                largest = max(largest, x.nbytes)
            by_epoch.append(resident_bytes())
        # The allocator settles within a few epochs and then grows by a
        # freed buffer of the largest minibatch now and then (17-31 MiB in
        # all on a quiet machine). The bound is half of what leaking the
        # features of one minibatch per epoch would add (about 100 MiB),
        # whatever the minibatch size.
        settled, last = max(by_epoch[5:15]), max(by_epoch[40:])
        leak_bound = 0.5 * largest * (len(by_epoch) - 15)
        self.assertLess(last - settled, leak_bound,
                        f"resident MiB by epoch: {[b // MiB for b in by_epoch]}; "
                        f"bound {leak_bound / MiB:.0f} MiB")


if __name__ == "__main__":
    unittest.main()
