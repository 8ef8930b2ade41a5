"""bulkgnn.NeighborLoader(device="cuda") on a GPU (label gpu): the CPU loader's
minibatches, as CUDA arrays that torch views without a copy, and to_pyg()
on the GPU. Without a GPU every test says why it is skipped; with
BULKGNN_EXPECT_GPU set (the GPU machine's check script sets it) a missing GPU
or a torch without CUDA fails instead."""

import functools
import gc
import importlib.util
import os
import pathlib
import unittest

import numpy as np

import bulkgnn
from support import SHARED_DATA, torch

EXPECT_GPU = os.environ.get("BULKGNN_EXPECT_GPU") is not None


@functools.cache
def cora():
    """cora from ../shared/data, or where BULKGNN_DATA points (the GPU
    machine's native copies in .gpu-data)."""
    return bulkgnn.Dataset(str(pathlib.Path(os.environ.get("BULKGNN_DATA", SHARED_DATA)) / "cora"))


def usable_gpu():
    """Why this process cannot test the GPU loader, or None."""
    if not bulkgnn._bulkgnn._gpu_support()[1]:
        return "no GPU is visible to bulkgnn"
    if torch is None or not torch.cuda.is_available():
        return "torch with CUDA is not installed"
    return None


class GpuLoader(unittest.TestCase):
    def setUp(self):
        reason = usable_gpu()
        if reason is None:
            return
        if EXPECT_GPU:
            self.fail(f"BULKGNN_EXPECT_GPU is set but {reason}")
        self.skipTest(reason)

    def pairs(self, **kwargs):
        """The same epoch's minibatches from the CPU and the GPU loader."""
        common = {"fanouts": [10, 5], "batch_size": 128, "seed": 3, **kwargs}
        return zip(bulkgnn.NeighborLoader(cora(), **common),
                   bulkgnn.NeighborLoader(cora(), device="cuda", **common))

    def test_the_gpu_hands_out_the_cpus_minibatches_as_cuda_arrays(self):
        for sampler, fanouts in (("sage", [10, 5]), ("labor", [10, 5]), ("ladies", [256, 256])):
            with self.subTest(sampler=sampler):
                count = 0
                for on_cpu, on_gpu in self.pairs(sampler=sampler, fanouts=fanouts):
                    count += 1
                    self.assertEqual(on_gpu.device, "cuda:0")
                    self.assertEqual(on_gpu.digest(), on_cpu.digest())
                    for name in ("seeds", "labels", "input_nodes", "features"):
                        there = torch.from_dlpack(getattr(on_gpu, name))
                        self.assertTrue(there.is_cuda, name)
                        self.assertTrue(torch.equal(there.cpu(),
                                                    torch.from_dlpack(getattr(on_cpu, name))),
                                        name)
                    for cpu_block, gpu_block in zip(on_cpu.blocks, on_gpu.blocks):
                        for name in ("indptr", "indices", "values"):
                            if getattr(cpu_block, name) is None:  # values: LADIES' only
                                self.assertIsNone(getattr(gpu_block, name))
                                continue
                            self.assertTrue(torch.equal(
                                torch.from_dlpack(getattr(gpu_block, name)).cpu(),
                                torch.from_dlpack(getattr(cpu_block, name))), name)
                self.assertGreater(count, 1)

    def test_to_pyg_puts_every_tensor_on_the_gpu(self):
        if importlib.util.find_spec("torch_geometric") is None:
            self.skipTest("torch_geometric is not installed")
        on_cpu, on_gpu = next(iter(self.pairs()))
        expected, actual = on_cpu.to_pyg(), on_gpu.to_pyg()
        for key in ("x", "edge_index", "y", "n_id", "input_id"):
            self.assertTrue(actual[key].is_cuda, key)
            self.assertTrue(torch.equal(actual[key].cpu(), expected[key]), key)

    def test_a_tensor_kept_after_its_loader_stays_valid(self):
        loader = bulkgnn.NeighborLoader(cora(), fanouts=[5], batch_size=256, device="cuda")
        mb = next(iter(loader))
        features = torch.from_dlpack(mb.features)
        expected = features.cpu().clone()
        del mb, loader
        gc.collect()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(features.cpu(), expected))

    def test_a_sampler_without_gpu_kernels_is_refused_by_name(self):
        with self.assertRaisesRegex(ValueError, "shadow.*no GPU kernel"):
            bulkgnn.NeighborLoader(cora(), fanouts=[5], batch_size=64, sampler="shadow",
                                   device="cuda")

    def test_numpy_cannot_read_a_gpu_array_and_says_so(self):
        mb = next(iter(bulkgnn.NeighborLoader(cora(), fanouts=[5], batch_size=64, device="cuda")))
        with self.assertRaisesRegex(ValueError, "GPU memory, which numpy cannot read"):
            mb.features.numpy()
        np.testing.assert_array_equal(torch.from_dlpack(mb.seeds).cpu().numpy(),
                                      mb.seeds.torch().cpu().numpy())


if __name__ == "__main__":
    unittest.main()
