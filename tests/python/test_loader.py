"""bulkgnn.NeighborLoader: the CLI's minibatches, zero-copy arrays that own
their buffers, argument errors, failures, Ctrl-C and data-parallel slices."""

import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

import numpy as np

import bulkgnn
from support import CLI, CORA, requires_torch, torch, write_native_dataset

DS = bulkgnn.Dataset(CORA)


def epoch_digests(loader, epochs):
    return [[mb.digest() for mb in loader] for _ in range(epochs)]


def cli_sample_digest(*args):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([CLI, "sample", str(CORA), "--quiet", "--metrics-out", f"{tmp}/m.json",
                        *args], check=True, stdout=subprocess.DEVNULL)
        with open(f"{tmp}/m.json") as f:
            return int(json.load(f)["digest"], 16)


def os_threads():
    return len(os.listdir("/proc/self/task"))


def os_threads_once_at_most(expected, timeout=10.0):
    # A joined thread (Python's Timer, or a pipeline stage) can still be listed
    # for a moment while the OS tears it down, so give the count time to drop.
    deadline = time.monotonic() + timeout
    while os_threads() > expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return os_threads()


class SameMinibatchesAsTheCli(unittest.TestCase):
    def check(self, sampler, fanouts, cli_flags=(), **options):
        loader = bulkgnn.NeighborLoader(DS, fanouts=fanouts, batch_size=32, seed=7,
                                        sampler=sampler, **options)
        run = bulkgnn.RunDigest()
        for digests in epoch_digests(loader, 2):
            for d in digests:
                run.add(d)
        expected = cli_sample_digest("--sampler", sampler, "--fanouts",
                                     ",".join(map(str, fanouts)), "--batch-size", "32",
                                     "--seed", "7", "--epochs", "2", *cli_flags)
        self.assertEqual(run.value, expected)

    def test_node_wise(self):
        self.check("sage", [10, 5])

    def test_node_wise_for_any_bulk_prefetch_or_threads(self):
        self.check("sage", [10, 5], bulk=3, prefetch=1, threads=1)

    def test_layer_wise(self):
        self.check("ladies", [64, 64])

    def test_labor_samples_what_the_command_samples(self):
        self.check("labor", [5, 3])

    def test_labor_star_samples_what_the_command_samples(self):
        self.check("labor-star", [5, 3])
        self.check("labor-star", [5, 3], cli_flags=("--importance-iterations", "2"),
                   sampler_options={"importance_iterations": 2})

    def test_shadow_samples_what_the_command_samples(self):
        self.check("shadow", [5, 3])
        self.check("shadow", [5, 3], cli_flags=("--layers", "3"), layers=3)

    def test_cluster_gcn_samples_what_the_command_samples(self):
        self.check("cluster-gcn", [-1, -1], cli_flags=("--clusters", "100"),
                   sampler_options={"clusters": 100})

    def test_cluster_gcn_keeps_its_clusters_in_the_subgraph_cache(self):
        with tempfile.TemporaryDirectory() as cache:
            self.check("cluster-gcn", [-1, -1], cli_flags=("--clusters", "100"),
                       sampler_options={"clusters": 100}, subgraph_cache=cache)
            kept = os.listdir(cache)
            self.assertEqual(len(kept), 1)
            self.assertTrue(kept[0].startswith("cluster-gcn-"))
            # Read back: the same minibatches as METIS's clusters.
            self.check("cluster-gcn", [-1, -1], cli_flags=("--clusters", "100"),
                       sampler_options={"clusters": 100}, subgraph_cache=cache)
            self.assertEqual(os.listdir(cache), kept)

    def test_pinsage_samples_what_the_command_samples(self):
        self.check("pinsage", [5, 3], cli_flags=("--walks", "4", "--termination-percent", "20"),
                   sampler_options={"walks": 4, "termination_percent": 20})

    def test_saint_samples_what_the_command_samples(self):
        self.check("saint-rw", [-1, -1], cli_flags=("--walk-length", "3"),
                   sampler_options={"walk_length": 3})
        self.check("saint-edge", [-1, -1], cli_flags=("--steps", "5", "--coverage", "20"),
                   sampler_options={"steps": 5, "coverage": 20})

    def test_a_samplers_own_parameters(self):
        self.check("random-walk", [4, 3], cli_flags=("--walk-length", "3"),
                   sampler_options={"walk_length": 3})


class SamplerTable(unittest.TestCase):
    def test_lists_every_sampler_with_its_layer_and_parameters(self):
        table = {s["name"]: s for s in bulkgnn.samplers()}
        self.assertEqual(list(table),
                         ["sage", "ladies", "fastgcn", "random-walk", "labor", "labor-star",
                          "shadow", "cluster-gcn", "pinsage", "saint-node", "saint-edge",
                          "saint-rw"])
        self.assertEqual(table["cluster-gcn"]["parameters"]["clusters"]["default"], 0)
        self.assertEqual(table["shadow"]["layer"], "sage")
        self.assertEqual(table["labor"]["aliases"], ["labor-0"])
        self.assertEqual(table["labor"]["layer"], "sage")
        self.assertEqual(table["labor-star"]["layer"], "graph-conv")
        self.assertEqual(
            table["labor-star"]["parameters"]["importance_iterations"]["default"], -1)
        self.assertEqual(table["sage"]["aliases"], ["node-wise"])
        self.assertEqual(table["ladies"]["layer"], "gcn")
        self.assertEqual(table["random-walk"]["fanout"], "per destination")
        self.assertEqual(table["random-walk"]["parameters"]["walk_length"]["default"], 2)
        self.assertEqual(table["sage"]["parameters"], {})


class Epochs(unittest.TestCase):
    def test_len_is_the_minibatches_of_an_epoch(self):
        loader = bulkgnn.NeighborLoader(DS, np.arange(1000), fanouts=[5], batch_size=64)
        self.assertEqual(len(loader), 16)
        self.assertEqual(sum(1 for _ in loader), 16)

    def test_each_iteration_is_the_next_epoch_and_set_epoch_chooses_it(self):
        def loader():
            return bulkgnn.NeighborLoader(DS, np.arange(500), fanouts=[5, 5], batch_size=64)
        epochs = epoch_digests(loader(), 3)
        self.assertNotEqual(epochs[0], epochs[1])
        chosen = loader()
        chosen.set_epoch(2)
        self.assertEqual(epoch_digests(chosen, 1)[0], epochs[2])
        self.assertEqual(chosen.epoch, 3)

    def test_without_shuffle_the_seeds_come_in_the_given_order(self):
        seeds = np.random.default_rng(0).permutation(DS.num_nodes)[:300]
        loader = bulkgnn.NeighborLoader(DS, seeds, fanouts=[5], batch_size=64, shuffle=False)
        for _ in range(2):
            got = np.concatenate([mb.seeds.numpy() for mb in loader])
            np.testing.assert_array_equal(got, seeds)

    def test_an_epochs_report_has_every_stage(self):
        epoch = iter(bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16))
        count = sum(1 for _ in epoch)
        stages = epoch.report()["stages"]
        self.assertEqual([s["name"] for s in stages], ["shuffle", "sample", "gather", "consume"])
        self.assertEqual(stages[-1]["items"], count)

    def test_the_queues_stay_within_their_byte_bound(self):
        # One minibatch of features (16 seeds' inputs x 1433 floats) is tens of
        # kB: a 1 kB bound lets one item through at a time, which still
        # delivers every minibatch.
        loader = bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16, queue_bytes=1024)
        self.assertEqual(loader.queue_bytes, 1024)
        epoch = iter(loader)
        count = sum(1 for _ in epoch)
        self.assertEqual(count, len(loader))
        stages = {s["name"]: s for s in epoch.report()["stages"]}
        self.assertGreater(stages["gather"]["peak_output_bytes"], 0)
        self.assertGreater(stages["sample"]["peak_output_bytes"], 0)
        with self.assertRaises(ValueError):
            bulkgnn.NeighborLoader(DS, fanouts=[5], queue_bytes=0)

    def test_a_new_iteration_ends_the_running_one(self):
        loader = bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16)
        first = iter(loader)
        next(first)
        self.assertEqual(sum(1 for _ in loader), len(loader))
        self.assertEqual(list(first), [])


class InputId(unittest.TestCase):
    """mb.input_id is PyG's: the positions of the minibatch's seeds in
    input_nodes, in the seeds' order, each position once per epoch."""

    def positions_of_an_epoch(self, seeds, **options):
        loader = bulkgnn.NeighborLoader(DS, input_nodes=seeds, num_neighbors=[2, 2],
                                        batch_size=7, **options)
        seen = []
        for mb in loader:
            input_id = mb.input_id.numpy()
            self.assertEqual(input_id.dtype, np.int64)
            self.assertTrue(np.array_equal(seeds[input_id], mb.seeds.numpy()))
            seen.extend(input_id.tolist())
        return seen

    def test_the_seeds_positions_in_input_nodes_even_with_repeated_nodes(self):
        seeds = np.array([5, 3, 5, 7, 3, 9, 11, 40, 41, 5, 60, 61, 62, 63, 64, 65, 66])
        for shuffle in (False, True):
            seen = self.positions_of_an_epoch(seeds, shuffle=shuffle)
            self.assertEqual(sorted(seen), list(range(len(seeds))))
            if not shuffle:
                self.assertEqual(seen, list(range(len(seeds))))

    def test_the_ranks_slices_hold_each_position_once(self):
        seeds = np.arange(100, 150)
        seen = []
        for rank in range(3):
            loader = bulkgnn.NeighborLoader(DS, input_nodes=seeds, num_neighbors=[2, 2],
                                            batch_size=10, shuffle=True, rank=rank,
                                            world_size=3)
            for mb in loader:
                input_id = mb.input_id.numpy()
                self.assertTrue(np.array_equal(seeds[input_id], mb.seeds.numpy()))
                seen.extend(input_id.tolist())
        self.assertEqual(sorted(seen), list(range(len(seeds))))

    def test_cluster_gcn_minibatches_are_positions_of_the_seeds_of_their_clusters(self):
        seeds = np.arange(0, 2708, 3)
        seen = []
        for rank in range(2):
            loader = bulkgnn.NeighborLoader(DS, input_nodes=seeds, num_neighbors=[-1, -1],
                                            batch_size=5, sampler="cluster-gcn",
                                            sampler_options={"clusters": 40}, rank=rank,
                                            world_size=2)
            self.assertEqual(len(loader), 8)
            for mb in loader:
                input_id = mb.input_id.numpy()
                self.assertTrue(np.array_equal(seeds[input_id], mb.seeds.numpy()))
                seen.extend(input_id.tolist())
        self.assertEqual(sorted(seen), list(range(len(seeds))))

    def test_saint_minibatches_carry_each_input_nodes_loss_weight(self):
        loader = bulkgnn.NeighborLoader(DS, fanouts=[-1, -1], batch_size=300, seed=2,
                                        sampler="saint-node")
        weight_of = {}
        seeds = set(DS.training_vertices().tolist())
        for mb in loader:
            norm = mb.node_norm.numpy()
            nodes = mb.input_nodes.numpy()
            self.assertEqual(len(norm), len(nodes))
            self.assertTrue(np.all(norm > 0))
            self.assertTrue(set(mb.seeds.numpy().tolist()) <= seeds)
            for v, w in zip(nodes.tolist(), norm.tolist()):
                self.assertEqual(weight_of.setdefault(v, w), w, "one weight per vertex")
        self.assertGreater(len(weight_of), 0)
        sage = bulkgnn.NeighborLoader(DS, fanouts=[5, 5], batch_size=300)
        self.assertIsNone(next(iter(sage)).node_norm)

    @requires_torch
    def test_saint_pyg_batches_have_node_norm_and_edge_weight(self):
        from bulkgnn._adapters import pyg_fields
        loader = bulkgnn.NeighborLoader(DS, fanouts=[-1, -1], batch_size=100, seed=2,
                                        sampler="saint-rw")
        mb = next(iter(loader))
        fields = pyg_fields(mb)
        self.assertEqual(fields["node_norm"].shape[0], fields["n_id"].shape[0])
        self.assertEqual(fields["edge_weight"].shape[0], fields["edge_index"].shape[1])
        self.assertTrue(bool((fields["edge_weight"] > 0).all()))

    def test_cluster_gcn_refuses_what_it_cannot_do(self):
        for options, named in ((dict(shuffle=False), "shuffle"),
                               (dict(input_nodes=np.array([4, 5, 4])), "listed twice"),
                               (dict(sampler_options={"clusters": 3000}), "clusters"),
                               (dict(num_neighbors=[5, -1]), "fanouts")):
            options = {"num_neighbors": [-1, -1], **options}
            with self.assertRaisesRegex(ValueError, named):
                bulkgnn.NeighborLoader(DS, batch_size=5, sampler="cluster-gcn", **options)

    @requires_torch
    def test_pygs_batch_carries_it(self):
        from bulkgnn._adapters import pyg_fields
        # Odd ids, so that positions and ids differ.
        input_nodes = torch.arange(30) * 2 + 1
        loader = bulkgnn.NeighborLoader(DS, input_nodes=input_nodes.numpy(), num_neighbors=[2],
                                        batch_size=8, shuffle=True)
        for mb in loader:
            fields = pyg_fields(mb)
            self.assertTrue(torch.equal(fields["n_id"][:fields["batch_size"]],
                                        input_nodes[fields["input_id"]]))


class ZeroCopyArrays(unittest.TestCase):
    def test_numpy_views_the_loaders_buffer(self):
        for mb in bulkgnn.NeighborLoader(DS, fanouts=[5, 5], batch_size=64):
            x = np.from_dlpack(mb.features)
            self.assertEqual(x.ctypes.data, mb.features.data_ptr)
            self.assertEqual(np.from_dlpack(mb.seeds).ctypes.data, mb.seeds.data_ptr)
            np.testing.assert_array_equal(x, DS.features[mb.input_nodes.numpy()])
            np.testing.assert_array_equal(mb.labels.numpy(), DS.labels[mb.seeds.numpy()])
            np.testing.assert_array_equal(mb.input_nodes.numpy()[:mb.batch_size],
                                          mb.seeds.numpy())

    @requires_torch
    def test_torch_views_the_loaders_buffer(self):
        for mb in bulkgnn.NeighborLoader(DS, fanouts=[5, 5], batch_size=64):
            self.assertEqual(torch.from_dlpack(mb.features).data_ptr(), mb.features.data_ptr)
            block = mb.blocks[0]
            self.assertEqual(torch.from_dlpack(block.indices).data_ptr(), block.indices.data_ptr)

    def test_a_viewed_buffer_is_never_handed_out_again(self):
        loader = bulkgnn.NeighborLoader(DS, np.arange(2000), fanouts=[5, 5], batch_size=64,
                                        prefetch=1, bulk=1)
        held = np.from_dlpack(next(iter(loader)).features)  # the minibatch object is gone
        kept = held.copy()
        for _ in range(3):
            for mb in loader:
                self.assertNotEqual(mb.features.data_ptr, held.ctypes.data)
        np.testing.assert_array_equal(held, kept)

    def test_views_outlive_the_loader_and_its_epoch(self):
        loader = bulkgnn.NeighborLoader(DS, fanouts=[10, 10], batch_size=64)
        epoch = iter(loader)
        mb = next(epoch)
        views = [np.from_dlpack(a) for a in (mb.features, mb.blocks[0].indices, mb.seeds)]
        if torch is not None:
            views.append(torch.from_dlpack(mb.features))
        copies = [v.copy() if isinstance(v, np.ndarray) else v.clone() for v in views]
        del loader, epoch, mb
        gc.collect()
        for _ in bulkgnn.NeighborLoader(DS, fanouts=[10, 10], batch_size=64):
            pass  # reuses whatever memory was freed
        for view, copy in zip(views, copies):
            np.testing.assert_array_equal(np.asarray(view), np.asarray(copy))


class BadArguments(unittest.TestCase):
    def assert_names(self, argument, **kwargs):
        with self.assertRaisesRegex(ValueError, argument):
            bulkgnn.NeighborLoader(DS, **kwargs)

    def test_each_names_the_argument(self):
        self.assert_names("fanouts", fanouts=[])
        self.assert_names("fanouts", fanouts=[10, -2])
        self.assert_names("num_neighbors", num_neighbors=[10, "x"])
        self.assert_names("num_neighbors is empty", num_neighbors=[])
        self.assert_names("input_nodes=\\('paper', ...\\) is PyG's form for a heterogeneous",
                          input_nodes=("paper", [1, 2]))
        self.assert_names("batch_size", batch_size=0)
        self.assert_names("bulk", bulk=0)
        self.assert_names("prefetch", prefetch=0)
        self.assert_names("threads", threads=0)
        self.assert_names("seed", seed=-1)
        self.assert_names("sampler", sampler="gcn")
        self.assert_names("backend", backend="gpu")
        self.assert_names("weighted", weighted=True)  # cora has no edge weights
        self.assert_names("weight_attr", weight_attr="w")
        self.assert_names("replace", sampler="ladies", replace=True)
        self.assert_names("layers", fanouts=[5, 3], layers=3)  # sage: one block per hop
        self.assert_names("walk_length", sampler_options={"walk_length": 2})
        self.assert_names("walk_length", sampler="random-walk", sampler_options={"walk_length": 0})
        self.assert_names("sampler_options", sampler="random-walk", sampler_options=[3])
        self.assert_names("rank", rank=2, world_size=2)
        self.assert_names("world_size", rank=0, world_size=0)
        self.assert_names("world_size", rank=0, world_size=2**40)

    def test_a_launcher_variable_that_is_no_integer_is_named(self):
        saved = {name: os.environ.get(name) for name in ("OMPI_COMM_WORLD_RANK",
                                                          "OMPI_COMM_WORLD_SIZE")}
        os.environ["OMPI_COMM_WORLD_RANK"] = "x"
        os.environ["OMPI_COMM_WORLD_SIZE"] = "2"
        try:
            with self.assertRaisesRegex(ValueError, "OMPI_COMM_WORLD_RANK.*'x'"):
                bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16, rank="auto",
                                       world_size="auto")
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def test_seeds_out_of_range_of_a_wrong_dtype_or_shape(self):
        self.assert_names("seeds: vertex 2708 is not in", seeds=[0, 2708])
        self.assert_names("seeds: vertex -1 is not in", seeds=np.array([-1, 3]))
        self.assert_names("seeds must hold integer.*float32", seeds=np.ones(3, np.float32))
        self.assert_names("seeds is empty", seeds=[])
        self.assert_names("seeds.*one entry per node", seeds=np.ones(5, bool))
        self.assert_names("input_nodes: vertex 9999", input_nodes=[9999])
        self.assert_names("fanouts or num_neighbors", fanouts=[5], num_neighbors=[5])

    def test_a_dataset_that_is_not_one(self):
        with self.assertRaisesRegex(ValueError, "dataset must be a bulkgnn.Dataset"):
            bulkgnn.NeighborLoader({"x": 1}, fanouts=[5])


class Failures(unittest.TestCase):
    def test_a_failing_stage_raises_its_message_and_the_loader_goes_on(self):
        # The dataset opens with positive weights; one is then overwritten in
        # place, under the open mapping, with 0. Weighted sampling refuses it
        # when it draws: the sample stage throws on its own thread.
        with tempfile.TemporaryDirectory() as tmp:
            directory = write_native_dataset(f"{tmp}/zero", [[1, 2], [0, 2], [0, 1]], np.eye(3),
                                             [0, 1, 0], [0, 1, 2])
            np.save(directory / "edge_weight.npy", np.ones(6, np.float32))
            zero_weight = bulkgnn.Dataset(str(directory))
            in_place = np.load(directory / "edge_weight.npy", mmap_mode="r+")
            in_place[1] = 0
            in_place.flush()
            del in_place
            loader = bulkgnn.NeighborLoader(zero_weight, fanouts=[1], batch_size=2, weighted=True)
            for _ in range(2):
                with self.assertRaisesRegex(ValueError, "positive finite values"):
                    for _ in loader:
                        pass

    def test_edge_weights_that_are_not_positive_are_refused_when_the_dataset_opens(self):
        with tempfile.TemporaryDirectory() as tmp:
            directory = write_native_dataset(f"{tmp}/bad", [[1, 2], [0, 2], [0, 1]], np.eye(3),
                                             [0, 1, 0], [0, 1, 2])
            for bad in (0.0, -1.0):
                np.save(directory / "edge_weight.npy", np.array([1, bad, 1, 1, 1, 1], np.float32))
                with self.assertRaisesRegex(bulkgnn.Error, "edge_weight.npy.*entry 1 \\(row 0\\)"):
                    bulkgnn.Dataset(str(directory))

    @unittest.skipIf(bulkgnn._bulkgnn._gpu_support()[1], "a GPU is visible here")
    def test_a_gpu_loader_without_a_gpu_is_refused_naming_the_device(self):
        compiled, _, _ = bulkgnn._bulkgnn._gpu_support()
        for device in ("cuda", "cuda:0"):
            with self.assertRaisesRegex(ValueError, f"device='{device}': no GPU is visible") as e:
                bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16, device=device)
            self.assertEqual("no CUDA back end" in str(e.exception), not compiled)
        with self.assertRaisesRegex(ValueError, "backend cuda: no GPU is visible"):
            bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16, backend="cuda")

    def test_a_device_the_loader_cannot_use_is_refused_by_name(self):
        for kwargs, message in (({"device": "tpu"}, "device must be 'cpu' or 'cuda'"),
                                ({"device": "cuda", "backend": "reference"}, "give one"),
                                ({"device": "cpu", "backend": "cuda"}, "disagree")):
            with self.assertRaisesRegex(ValueError, message):
                bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=16, **kwargs)

    def test_a_host_loaders_minibatches_are_on_the_cpu(self):
        loader = bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=64, device="cpu")
        mb = next(iter(loader))
        self.assertEqual(mb.device, "cpu")
        self.assertEqual(mb.features.__dlpack_device__(), (1, 0))  # kDLCPU

    def test_ctrl_c_stops_the_pipeline_threads(self):
        loader = bulkgnn.NeighborLoader(DS, np.arange(DS.num_nodes), fanouts=[10, 10],
                                        batch_size=8, bulk=1, prefetch=1)
        for _ in loader:
            pass  # starts the kernels' worker threads, which stay
        idle_threads = os_threads()
        timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            for _ in range(10000):
                for _ in loader:
                    pass
        timer.join()
        self.assertLessEqual(os_threads_once_at_most(idle_threads), idle_threads)
        self.assertEqual(sum(1 for _ in loader), len(loader))


class ShadowSubgraphs(unittest.TestCase):
    def test_to_pyg_gives_each_edge_among_the_reached_vertices_once(self):
        loader = bulkgnn.NeighborLoader(DS, fanouts=[5, 3], batch_size=32, sampler="shadow")
        mb = next(iter(loader))
        edges = mb._pyg_edges()[0].numpy()
        pairs = set(zip(edges[0].tolist(), edges[1].tolist()))
        self.assertEqual(len(pairs), edges.shape[1])  # no edge twice
        nodes = mb.input_nodes.numpy()
        # Every edge of the graph from a kept vertex into a kept destination.
        indptr, indices = DS.indptr, DS.indices
        position = {v: i for i, v in enumerate(nodes)}
        targets = {t for _, t in pairs}
        for t in targets:
            v = nodes[t]
            for s in indices[indptr[v]:indptr[v + 1]]:
                if s in position:
                    self.assertIn((position[s], t), pairs)


class DataParallelSlices(unittest.TestCase):
    def test_the_ranks_slices_make_up_the_whole_minibatches(self):
        for sampler, fanouts in (("sage", [5, 5]), ("ladies", [32, 32])):
            def loader(rank, world_size):
                return bulkgnn.NeighborLoader(DS, np.arange(100), fanouts=fanouts, batch_size=16,
                                              sampler=sampler, rank=rank, world_size=world_size)
            whole = [mb.seeds.numpy() for mb in loader(0, 1)]
            slices = [[mb.seeds.numpy() for mb in loader(r, 3)] for r in range(3)]
            for r in range(3):
                self.assertEqual(len(slices[r]), len(whole), sampler)  # no rank runs short
            for j, seeds in enumerate(whole):
                np.testing.assert_array_equal(np.concatenate([s[j] for s in slices]), seeds)

    def test_node_wise_slices_keep_the_whole_minibatchs_sample(self):
        def last_hop_edges(mb):
            block, nodes = mb.blocks[-1], mb.input_nodes.numpy()
            rows = np.repeat(np.arange(block.num_dst), np.diff(block.indptr.numpy()))
            return {(nodes[s], nodes[d]) for s, d in zip(block.indices.numpy(), rows)}
        whole = bulkgnn.NeighborLoader(DS, fanouts=[5, 5], batch_size=40, rank=0, world_size=1)
        parts = [bulkgnn.NeighborLoader(DS, fanouts=[5, 5], batch_size=40, rank=r, world_size=2)
                 for r in range(2)]
        for mb, *sliced in zip(whole, *parts):
            self.assertEqual(last_hop_edges(mb), set.union(*map(last_hop_edges, sliced)))

    def test_by_default_a_process_samples_its_seeds_whole_as_pyg_does(self):
        # A PyG DDP script gives each process its shard; slicing it again
        # would train each rank on part of its nodes.
        with mock.patch.dict(os.environ, {"OMPI_COMM_WORLD_RANK": "1",
                                          "OMPI_COMM_WORLD_SIZE": "4"}):
            loader = bulkgnn.NeighborLoader(DS, np.arange(64), fanouts=[5], batch_size=16)
            self.assertEqual((loader.rank, loader.world_size), (0, 1))
            self.assertEqual(sum(mb.seeds.numpy().size for mb in loader), 64)
            auto = bulkgnn.NeighborLoader(DS, fanouts=[5], rank="auto", world_size="auto")
            self.assertEqual((auto.rank, auto.world_size), (1, 4))
        with self.assertRaisesRegex(ValueError, "rank and world_size together"):
            bulkgnn.NeighborLoader(DS, fanouts=[5], rank=1)

    def test_exact_slices_are_never_empty(self):
        # 100 seeds in batches of 32: the last has 4 seeds, too few for 5 ranks.
        with self.assertWarnsRegex(UserWarning, "last minibatch of each epoch has 4 seeds"):
            loaders = [bulkgnn.NeighborLoader(DS, np.arange(100), fanouts=[5], batch_size=32,
                                              rank=r, world_size=5) for r in range(5)]
        for loader in loaders:
            sizes = [mb.seeds.numpy().size for mb in loader]
            self.assertEqual(len(sizes), 3)
            self.assertEqual(len(loader), 3)
            self.assertGreater(min(sizes), 0)
        with self.assertRaisesRegex(ValueError, "batch_size=2 is smaller than world_size=4"):
            bulkgnn.NeighborLoader(DS, np.arange(100), fanouts=[5], batch_size=2, rank=0,
                                   world_size=4)
        with self.assertRaisesRegex(ValueError, "3 seeds cannot give each of world_size=5"):
            bulkgnn.NeighborLoader(DS, np.arange(3), fanouts=[5], rank=0, world_size=5)

    @requires_torch
    def test_works_with_torch_distributed_initialised(self):
        import torch.distributed as dist
        if not dist.is_available():
            self.skipTest("this torch has no torch.distributed")
        with tempfile.TemporaryDirectory() as tmp:
            dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0,
                                    world_size=1)
            try:
                loader = bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=32, rank="auto",
                                                world_size="auto")
                self.assertEqual((loader.rank, loader.world_size), (0, 1))
                self.assertEqual(sum(1 for _ in loader), len(loader))
            finally:
                dist.destroy_process_group()


class PygAliasesAndIterableDataset(unittest.TestCase):
    def test_pyg_keywords_mean_what_they_mean_in_pyg(self):
        mask = np.zeros(DS.num_nodes, bool)
        mask[DS.split()[0]] = True
        pyg = bulkgnn.NeighborLoader(DS, num_neighbors=[5, 5], input_nodes=mask, batch_size=32,
                                     shuffle=True)
        own = bulkgnn.NeighborLoader(DS, DS.split()[0], fanouts=[5, 5], batch_size=32)
        self.assertEqual(epoch_digests(pyg, 1), epoch_digests(own, 1))

    def test_pyg_keywords_bring_pygs_defaults_every_node_unshuffled(self):
        for loader in (bulkgnn.NeighborLoader(DS, num_neighbors=[5], batch_size=1000),
                       bulkgnn.NeighborLoader(DS, fanouts=[5], input_nodes=None, batch_size=1000)):
            seeds = np.concatenate([mb.seeds.numpy() for mb in loader])
            np.testing.assert_array_equal(seeds, np.arange(DS.num_nodes))
        own = bulkgnn.NeighborLoader(DS, fanouts=[5], batch_size=1000)
        seeds = np.concatenate([mb.seeds.numpy() for mb in own])
        self.assertEqual(sorted(seeds), sorted(DS.training_vertices()))
        self.assertFalse(np.array_equal(seeds, np.sort(seeds)))  # shuffled

    def test_num_workers_is_accepted_and_explained(self):
        with self.assertWarnsRegex(UserWarning, "num_workers=2 is ignored"):
            bulkgnn.NeighborLoader(DS, num_neighbors=[5], num_workers=2)
        with self.assertRaisesRegex(ValueError, "num_workers"):
            bulkgnn.NeighborLoader(DS, num_neighbors=[5], num_workers=-1)

    @requires_torch
    def test_a_torch_iterable_dataset_yields_the_same_minibatches(self):
        dataset = bulkgnn.NeighborDataset(DS, fanouts=[5, 5], batch_size=32)
        self.assertIsInstance(dataset, torch.utils.data.IterableDataset)
        batches = torch.utils.data.DataLoader(dataset, batch_size=None)
        own = bulkgnn.NeighborLoader(DS, fanouts=[5, 5], batch_size=32)
        self.assertEqual([mb.digest() for mb in batches], epoch_digests(own, 1)[0])
        self.assertEqual(len(dataset), len(own))

    @requires_torch
    def test_dataloader_workers_are_refused_by_the_workers_not_left_hanging(self):
        # In a child process with a deadline: a hang fails the test instead
        # of stalling the suite.
        script = (
            "import sys, torch, bulkgnn\n"
            f"ds = bulkgnn.Dataset({str(CORA)!r})\n"
            "data = bulkgnn.NeighborDataset(ds, fanouts=[5, 5], batch_size=32)\n"
            "loader = torch.utils.data.DataLoader(data, batch_size=None, num_workers=2)\n"
            "try:\n"
            "    next(iter(loader))\n"
            "except RuntimeError as e:\n"
            "    print(e)\n"
            "    sys.exit(3)\n")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
        self.assertIn("use num_workers=0", done.stdout)


if __name__ == "__main__":
    unittest.main()
