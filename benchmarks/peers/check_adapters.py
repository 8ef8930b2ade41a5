"""mb.to_pyg() and mb.to_dgl() run through the real PyG and DGL.

The unit tests (tests/python/test_adapters.py) check the adapters' layout on plain
tensors, since CI has neither PyG nor DGL. This script runs in the peer environment
(benchmarks/peers/setup_venv.sh) and checks what the libraries themselves make of it:

  to_pyg  a torch_geometric.data.Data that passes Data.validate(); every edge is an edge
          of the graph (source = in-neighbour of target); PyG's SAGEConv over it equals
          the definition (lin_l(mean of in-neighbours) + lin_r(x)) computed by hand; a
          two-layer model gives the seeds the same outputs with and without
          trim_to_layer (so num_sampled_nodes/num_sampled_edges cut exactly the hops
          PyG expects); LADIES' edge_weight summed by PyG's SimpleConv equals the
          block's weighted sum.
  PyG's own NeighborLoader: the per-hop counts the benchmark recovers for its batches
          (torch-sparse returns none) trim the same model without changing the seeds'
          outputs either.
  to_dgl  DGL blocks that chain (block i's destinations are block i+1's sources), whose
          edges are graph edges, whose srcdata["feat"] / dstdata["label"] are the
          dataset's rows for input_nodes / output_nodes; DGL's SAGEConv('mean') on each
          block equals the definition computed from bulkgnn's own CSR block; LADIES'
          edata["w"] through DGL's message passing equals the weighted sum.
  to_dgl of link minibatches (LinkNeighborLoader): pair_graph and neg_pair_graph are DGL
          graphs over the endpoints whose edges, mapped through input_nodes, are the
          positives and the negatives of edge_label_index, pair_graph.edata[dgl.EID] the
          input ids; DGL's u_dot_v on them scores each pair as the dot product by hand.

    PYTHONPATH=build/python ~/.cache/bulkgnn-peers-venv/bin/python \\
        benchmarks/peers/check_adapters.py ../shared/data/cora ../shared/data/facebook

Exits non-zero and names the failed check on any mismatch. benchmarks/peers/run.sh runs
it before the measurements.
"""

import argparse
import sys

import numpy as np
import torch

import bulkgnn

MINIBATCHES = 4
TOLERANCE = dict(rtol=1e-9, atol=1e-9)  # float64 throughout: only summation order differs


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def close(actual, expected, what):
    check(actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != "
          f"{tuple(expected.shape)}")
    difference = (actual - expected).abs().max().item() if actual.numel() else 0.0
    check(torch.allclose(actual, expected, **TOLERANCE), f"{what}: max difference {difference}")


def graph_edge_keys(ds):
    """Every edge u -> v (u in row v) as the key v * n + u, sorted."""
    targets = np.repeat(np.arange(ds.num_nodes, dtype=np.int64), np.diff(ds.indptr))
    return np.sort(targets * ds.num_nodes + ds.indices.astype(np.int64))


def are_graph_edges(keys, ds, sources, targets, self_loops=False):
    """Whether every (source, target) is a graph edge; with self_loops, (v, v) counts as
    one too (the layer-wise samplers use A + I)."""
    wanted = targets.astype(np.int64) * ds.num_nodes + sources.astype(np.int64)
    position = np.searchsorted(keys, wanted)
    position[position == len(keys)] = 0
    found = keys[position] == wanted
    if self_loops:
        found |= sources == targets
    return bool(np.all(found))


def mean_by_hand(x, sources, targets, num_targets):
    total = torch.zeros(num_targets, x.shape[1], dtype=x.dtype).index_add_(0, targets, x[sources])
    count = torch.bincount(targets, minlength=num_targets).clamp(min=1).to(x.dtype)
    return total / count[:, None]


def weighted_sum_by_hand(x, sources, targets, weights, num_targets):
    return torch.zeros(num_targets, x.shape[1], dtype=x.dtype).index_add_(
        0, targets, x[sources] * weights.to(x.dtype)[:, None])


def block_coo(block):
    indptr = torch.from_dlpack(block.indptr).long()
    targets = torch.repeat_interleave(torch.arange(block.num_dst), indptr[1:] - indptr[:-1])
    return torch.from_dlpack(block.indices).long(), targets


def trimming_keeps_the_seeds_outputs(convs, batch, num_sampled_nodes, num_sampled_edges,
                                     where):
    """A two-layer model gives the seeds the same outputs with and without
    trim_to_layer: the per-hop counts cut exactly the hops PyG expects."""
    from torch_geometric.utils import trim_to_layer

    def two_layers(trim):
        h, edge_index = batch.x.double(), batch.edge_index
        for layer, conv in enumerate(convs):
            if trim:
                h, edge_index, _ = trim_to_layer(
                    layer=layer, num_sampled_nodes_per_hop=num_sampled_nodes,
                    num_sampled_edges_per_hop=num_sampled_edges, x=h, edge_index=edge_index)
            h = conv(h, edge_index)
            if layer == 0:
                h = h.relu()
        return h[:batch.batch_size]

    with torch.no_grad():
        close(two_layers(trim=True), two_layers(trim=False),
              f"{where}: trim_to_layer changes the seeds' outputs")


def check_pyg_loader_hop_counts(ds, name):
    """The per-hop counts peer_workloads.py recovers for PyG's own NeighborLoader (which
    samples with torch-sparse and returns none) trim PyG's model correctly too, so the
    benchmark's PyG runs trim as PyG documents."""
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader
    from torch_geometric.nn import SAGEConv

    from peer_workloads import torch_sparse_hop_counts

    targets = np.repeat(np.arange(ds.num_nodes, dtype=np.int64), np.diff(ds.indptr))
    graph = Data(edge_index=torch.stack([torch.from_numpy(ds.indices.astype(np.int64)),
                                         torch.from_numpy(targets)]),
                 x=torch.from_numpy(np.asarray(ds.features)), num_nodes=ds.num_nodes)
    torch.manual_seed(0)
    width = ds.features.shape[1]
    convs = [SAGEConv(width, 16, aggr="mean").double(), SAGEConv(16, 8, aggr="mean").double()]
    loader = NeighborLoader(graph, num_neighbors=[10, 5], batch_size=64, shuffle=True,
                            input_nodes=torch.from_numpy(ds.training_vertices().astype(np.int64)),
                            is_sorted=True)
    for i, batch in enumerate(loader):
        if i == MINIBATCHES:
            break
        nodes, edges = torch_sparse_hop_counts(batch, len(convs))
        trimming_keeps_the_seeds_outputs(convs, batch, nodes, edges,
                                         f"{name} PyG NeighborLoader minibatch {i}")


def check_to_pyg(ds, keys, name):
    from torch_geometric.data import Data
    from torch_geometric.nn import SAGEConv, SimpleConv

    torch.manual_seed(0)
    width = ds.features.shape[1]
    convs = [SAGEConv(width, 16, aggr="mean").double(), SAGEConv(16, 8, aggr="mean").double()]
    loader = bulkgnn.NeighborLoader(ds, fanouts=[10, 5], batch_size=64, seed=3, threads=2)
    for i, mb in enumerate(loader):
        if i == MINIBATCHES:
            break
        batch = mb.to_pyg()
        where = f"{name} to_pyg minibatch {i}"
        check(isinstance(batch, Data), f"{where}: not a torch_geometric Data")
        batch.validate(raise_on_error=True)
        n_id = batch.n_id.numpy()
        source, target = batch.edge_index.numpy()
        check(are_graph_edges(keys, ds, n_id[source], n_id[target]),
              f"{where}: an edge_index entry is not an edge of the graph")
        check(np.array_equal(n_id[:batch.batch_size], mb.seeds.numpy()),
              f"{where}: n_id does not start with the seeds")
        x = batch.x.double()
        close(x, torch.from_numpy(np.asarray(ds.features[n_id], dtype=np.float64)),
              f"{where}: x is not the features of n_id")
        conv = convs[0]
        expected = conv.lin_l(mean_by_hand(x, batch.edge_index[0], batch.edge_index[1],
                                           x.shape[0])) + conv.lin_r(x)
        with torch.no_grad():
            close(conv(x, batch.edge_index), expected.detach(), f"{where}: SAGEConv")
        trimming_keeps_the_seeds_outputs(convs, batch, batch.num_sampled_nodes,
                                         batch.num_sampled_edges, where)

    loader = bulkgnn.NeighborLoader(ds, fanouts=[256, 256], batch_size=64, seed=3,
                                    sampler="ladies", threads=2)
    for i, mb in enumerate(loader):
        if i == MINIBATCHES:
            break
        batch = mb.to_pyg()
        where = f"{name} to_pyg LADIES minibatch {i}"
        check(batch.edge_weight is not None, f"{where}: no edge_weight")
        x = batch.x.double()
        expected = weighted_sum_by_hand(x, batch.edge_index[0], batch.edge_index[1],
                                        batch.edge_weight, x.shape[0])
        close(SimpleConv(aggr="sum")(x, batch.edge_index, batch.edge_weight.double()), expected,
              f"{where}: SimpleConv with edge_weight")


def check_to_dgl(ds, keys, name):
    import dgl
    import dgl.function as fn
    from dgl.nn import SAGEConv

    torch.manual_seed(0)
    width = ds.features.shape[1]
    labels = ds.labels
    for sampler, fanouts in (("sage", [10, 5]), ("ladies", [256, 256])):
        convs = [SAGEConv(width, 16, "mean").double(), SAGEConv(16, 8, "mean").double()]
        loader = bulkgnn.NeighborLoader(ds, fanouts=fanouts, batch_size=64, seed=5,
                                        sampler=sampler, threads=2)
        for i, mb in enumerate(loader):
            if i == MINIBATCHES:
                break
            input_nodes, output_nodes, blocks = mb.to_dgl()
            where = f"{name} to_dgl {sampler} minibatch {i}"
            check(all(isinstance(b, dgl.DGLGraph) and b.is_block for b in blocks),
                  f"{where}: not DGL blocks")
            check(len(blocks) == len(fanouts), f"{where}: {len(blocks)} blocks")
            for lower, upper in zip(blocks, blocks[1:]):
                check(lower.num_dst_nodes() == upper.num_src_nodes(),
                      f"{where}: blocks do not chain")
            check(blocks[-1].num_dst_nodes() == len(output_nodes),
                  f"{where}: the last block's destinations are not the seeds")
            check(blocks[0].num_src_nodes() == len(input_nodes),
                  f"{where}: the first block's sources are not input_nodes")
            ids = input_nodes.numpy()
            check(np.array_equal(ids[:len(output_nodes)], output_nodes.numpy()),
                  f"{where}: input_nodes do not start with the seeds")
            close(blocks[0].srcdata["feat"].double(),
                  torch.from_numpy(np.asarray(ds.features[ids], dtype=np.float64)),
                  f"{where}: srcdata['feat'] is not the features of input_nodes")
            check(np.array_equal(blocks[-1].dstdata["label"].numpy(),
                                 labels[output_nodes.numpy()].astype(np.int64)),
                  f"{where}: dstdata['label'] is not the labels of output_nodes")
            h = blocks[0].srcdata["feat"].double()
            for layer, (dgl_block, block) in enumerate(zip(blocks, mb.blocks)):
                sources, targets = block_coo(block)
                dgl_sources, dgl_targets = dgl_block.edges(order="srcdst")
                check(are_graph_edges(keys, ds, ids[dgl_sources.numpy()],
                                      ids[dgl_targets.numpy()], self_loops=sampler != "sage"),
                      f"{where}: block {layer} has an edge that is not a graph edge")
                check(dgl_block.num_edges() == len(sources),
                      f"{where}: block {layer} has {dgl_block.num_edges()} edges, bulkgnn's "
                      f"{len(sources)}")
                with torch.no_grad():
                    if sampler == "sage":
                        conv = convs[layer]
                        # fc_self carries the bias in DGL's mean SAGEConv.
                        expected = conv.fc_neigh(mean_by_hand(h, sources, targets,
                                                              block.num_dst)) + \
                            conv.fc_self(h[:block.num_dst])
                        h_next = conv(dgl_block, (h, h[:block.num_dst]))
                        close(h_next, expected, f"{where}: SAGEConv on block {layer}")
                    else:
                        weights = torch.from_dlpack(block.values)
                        expected = weighted_sum_by_hand(h, sources, targets, weights,
                                                        block.num_dst)
                        dgl_block.srcdata["h"] = h
                        dgl_block.edata["w64"] = dgl_block.edata["w"].double()
                        dgl_block.update_all(fn.u_mul_e("h", "w64", "m"), fn.sum("m", "out"))
                        h_next = dgl_block.dstdata["out"]
                        close(h_next, expected, f"{where}: u_mul_e/sum with edata['w'] on "
                              f"block {layer}")
                h = h_next.relu()


def check_link_to_dgl(ds, name):
    import dgl
    import dgl.function as fn

    targets = np.repeat(np.arange(ds.num_nodes, dtype=np.int64), np.diff(ds.indptr))
    sources = np.asarray(ds.indices, dtype=np.int64)
    one_way = np.stack([sources, targets])[:, sources < targets]
    loader = bulkgnn.LinkNeighborLoader(ds, num_neighbors=[5, 5], edge_label_index=one_way,
                                        neg_sampling_ratio=1.0, batch_size=64)
    for i, mb in enumerate(loader):
        if i == MINIBATCHES:
            break
        where = f"{name} link to_dgl minibatch {i}"
        input_nodes, pair, negative, blocks = mb.to_dgl()
        ids = input_nodes.numpy()
        index = mb.edge_label_index.numpy()
        positives = len(mb.input_id.numpy())
        for graph, first, last, what in ((pair, 0, positives, "pair_graph"),
                                         (negative, positives, index.shape[1], "neg_pair_graph")):
            check(isinstance(graph, dgl.DGLGraph) and graph.num_nodes() == len(mb.seeds),
                  f"{where}: {what} is not a DGL graph over the endpoints")
            u, v = graph.edges(order="eid")
            check(np.array_equal(ids[u.numpy()], ids[index[0, first:last]]) and
                  np.array_equal(ids[v.numpy()], ids[index[1, first:last]]),
                  f"{where}: {what}'s edges are not edge_label_index's")
            z = torch.randn(graph.num_nodes(), 8, dtype=torch.float64)
            graph.ndata["z"] = z
            graph.apply_edges(fn.u_dot_v("z", "z", "score"))
            close(graph.edata["score"].reshape(-1), (z[u] * z[v]).sum(1),
                  f"{where}: u_dot_v on {what}")
        check(np.array_equal(pair.edata[dgl.EID].numpy(), mb.input_id.numpy()),
              f"{where}: pair_graph.edata[dgl.EID] is not input_id")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", help="dataset directories (native or OGB raw)")
    args = parser.parse_args()
    torch.set_num_threads(2)
    import dgl
    import torch_geometric
    print(f"bulkgnn adapters against torch {torch.__version__}, torch_geometric "
          f"{torch_geometric.__version__}, dgl {dgl.__version__}")
    try:
        for path in args.datasets:
            ds = bulkgnn.Dataset(path)
            keys = graph_edge_keys(ds)
            check_to_pyg(ds, keys, path)
            print(f"{path}: to_pyg passed ({MINIBATCHES} node-wise and {MINIBATCHES} LADIES "
                  "minibatches)")
            check_pyg_loader_hop_counts(ds, path)
            print(f"{path}: PyG NeighborLoader's recovered per-hop counts passed")
            check_to_dgl(ds, keys, path)
            print(f"{path}: to_dgl passed ({MINIBATCHES} node-wise and {MINIBATCHES} LADIES "
                  "minibatches)")
            check_link_to_dgl(ds, path)
            print(f"{path}: link to_dgl passed ({MINIBATCHES} link minibatches)")
    except CheckFailed as failure:
        sys.exit(f"check_adapters: FAILED: {failure}")
    print("check_adapters: every check passed")


if __name__ == "__main__":
    main()
