"""Minibatches in the layouts PyG's and DGL's loaders yield. torch, PyG and DGL
are imported here, when an adapter is called, never by `import bulkgnn`."""

import importlib


def _require(module, caller):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"Minibatch.{caller}() needs {module}, which is not installed: {e}") from e


def _coo(block, torch):
    """(sources, destinations) of a block's edges as int64 local ids."""
    indptr = torch.from_dlpack(block.indptr)
    destinations = torch.repeat_interleave(torch.arange(block.num_dst), indptr[1:] - indptr[:-1])
    return torch.from_dlpack(block.indices).long(), destinations


def pyg_fields(mb):
    """The fields of a PyG NeighborLoader batch as torch tensors.

    n_id lists the seeds first, then the nodes each hop added (blocks' sources
    are prefixes of it). edge_index[0] holds the source (neighbour) and
    edge_index[1] the target, positions in n_id, hop by hop from the seeds;
    num_sampled_nodes[h] and num_sampled_edges[h] count what hop h added, as
    trim_to_layer expects. x (the loader's buffer, no copy) and y are those of
    n_id; model(x, edge_index)[:batch_size] are the seeds' outputs."""
    torch = _require("torch", "to_pyg")
    hops = mb.blocks[::-1]  # PyG counts from the seeds, DGL from the inputs
    sources, targets = zip(*(_coo(block, torch) for block in hops))
    labels = mb.input_labels
    return {
        "x": None if mb.features is None else torch.from_dlpack(mb.features),
        "edge_index": torch.stack([torch.cat(sources), torch.cat(targets)]),
        "y": None if labels is None else torch.from_dlpack(labels).long(),
        "n_id": torch.from_dlpack(mb.input_nodes).long(),
        "batch_size": mb.batch_size,
        "num_sampled_nodes": [hops[0].num_dst] + [b.num_src - b.num_dst for b in hops],
        "num_sampled_edges": [b.num_edges for b in hops],
    }


def to_pyg(mb):
    data = _require("torch_geometric.data", "to_pyg")
    return data.Data(**{k: v for k, v in pyg_fields(mb).items() if v is not None})


def to_dgl(mb):
    """(input_nodes, output_nodes, blocks) as DGL's DataLoader yields them;
    blocks[0].srcdata["feat"] holds the features (no copy),
    blocks[-1].dstdata["label"] the seeds' labels, and edata["w"] the
    layer-wise samplers' edge weights."""
    dgl = _require("dgl", "to_dgl")
    torch = _require("torch", "to_dgl")
    blocks = []
    for b in mb.blocks:
        block = dgl.create_block(_coo(b, torch),
                                 num_src_nodes=b.num_src, num_dst_nodes=b.num_dst)
        if b.values is not None:
            block.edata["w"] = torch.from_dlpack(b.values)
        blocks.append(block)
    if mb.features is not None:
        blocks[0].srcdata["feat"] = torch.from_dlpack(mb.features)
    if mb.labels is not None:
        blocks[-1].dstdata["label"] = torch.from_dlpack(mb.labels).long()
    return torch.from_dlpack(mb.input_nodes).long(), torch.from_dlpack(mb.seeds).long(), blocks
