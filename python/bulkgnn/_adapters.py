"""Minibatches in the layouts PyG's and DGL's loaders yield. torch, PyG and DGL
are imported here, when an adapter is called, never by `import bulkgnn`."""

import importlib


def _require(module, caller):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"Minibatch.{caller}() needs {module}, which is not installed: {e}") from e
    except Exception as e:  # noqa: BLE001 - a broken install raises anything
        # DGL's and PyG's compiled parts are built for one torch version each;
        # against another they fail inside their import (DGL 2.1 with a newer
        # torch: FileNotFoundError for its graphbolt library).
        try:
            torch_version = importlib.import_module("torch").__version__
        except ImportError:
            torch_version = "(not installed)"
        raise ImportError(
            f"Minibatch.{caller}() needs {module}, which is installed but does not load with "
            f"torch {torch_version} ({type(e).__name__}: {e}); install the {module} build made "
            f"for this torch (DGL: the wheel index for your torch and CUDA at "
            f"https://www.dgl.ai/pages/start.html; PyG: its pip command for your torch)") from e


def pyg_fields(mb, e_id=False):
    """The fields of a PyG NeighborLoader batch, as torch tensors.

    PyG samples each node's neighbours once, at the hop where the node first
    appears, and every layer reuses them; bulkgnn's blocks (DGL's layout) draw
    each layer's destinations afresh. So hop h keeps the rows of block L-1-h
    whose destinations hop h added: the seeds' rows of the last block, then
    the new rows of each block below. n_id lists the seeds first, then the
    nodes each hop added (every block's sources are a prefix of it);
    edge_index[0] holds the source (neighbour) and edge_index[1] the target,
    positions in n_id, hop by hop; num_sampled_nodes and num_sampled_edges
    count what each hop added, as trim_to_layer expects. x (the loader's
    buffer, no copy) and y belong to n_id, so model(x, edge_index)[:batch_size]
    are the seeds' outputs. Layer-wise samplers' and GraphSAINT's weights come
    as edge_weight, GraphSAINT's loss normalisation as node_norm (PyG's
    GraphSAINT batches' names). With e_id, e_id numbers each edge as the
    dataset's edge_index did (its CSR position for a dataset read from a
    directory; -1 for an edge the graph lacks: a LADIES self loop, a PinSAGE
    walk neighbour), and on a dataset with edge weights a sampler that gives
    none of its own puts the edges' weights in edge_weight, as PyG slices
    them; other edge attributes are data.edge_attr[batch.e_id]."""
    torch = _require("torch", "to_pyg")
    hops = mb.blocks[::-1]  # PyG counts from the seeds, DGL from the inputs
    edge_index, edge_weight, num_sampled_edges = mb._pyg_edges()  # built in C++
    edge_ids = None
    if e_id:
        edge_ids, graph_weights = mb._pyg_edge_ids()
        edge_ids = torch.from_dlpack(edge_ids)
        if edge_weight is None and graph_weights is not None:
            edge_weight = graph_weights
    labels = mb.input_labels
    fields = {
        "x": None if mb.features is None else torch.from_dlpack(mb.features),
        "edge_index": torch.from_dlpack(edge_index),
        "edge_weight": None if edge_weight is None else torch.from_dlpack(edge_weight),
        "e_id": edge_ids,
        "y": None if labels is None else torch.from_dlpack(labels).long(),
        "n_id": torch.from_dlpack(mb.input_nodes).long(),
        "batch_size": mb.batch_size,
        "num_sampled_nodes": [hops[0].num_dst] + [b.num_src - b.num_dst for b in hops],
        "num_sampled_edges": num_sampled_edges,
        "input_id": torch.from_dlpack(mb.input_id),
        "node_norm": None if mb.node_norm is None else torch.from_dlpack(mb.node_norm),
    }
    if mb.is_link:
        fields.update(_link_fields(mb, torch))
    if mb.device != "cpu":  # what was computed on the host joins the GPU's arrays
        fields = {k: v.to(mb.device) if torch.is_tensor(v) else v for k, v in fields.items()}
    return fields


def _link_fields(mb, torch):
    """A link minibatch's supervision as PyG's LinkNeighborLoader batch holds it:
    local ids are positions in n_id (its endpoints are the seeds, first in n_id);
    binary negatives: edge_label_index and edge_label; triplet: src_index,
    dst_pos_index, dst_neg_index. PyG's link batches carry no batch_size."""
    fields = {"batch_size": None, "input_id": torch.from_dlpack(mb.input_id)}
    edge_label_index = torch.from_dlpack(mb.edge_label_index)
    if mb.dst_neg_index is None:
        fields["edge_label_index"] = edge_label_index
        fields["edge_label"] = torch.from_dlpack(mb.edge_label)
    else:
        fields["src_index"] = edge_label_index[0]
        fields["dst_pos_index"] = edge_label_index[1]
        fields["dst_neg_index"] = torch.from_dlpack(mb.dst_neg_index)
    return fields


def to_pyg(mb, e_id=False):
    data = _require("torch_geometric.data", "to_pyg")
    return data.Data(**{k: v for k, v in pyg_fields(mb, e_id).items() if v is not None})


def to_dgl(mb, e_id=False):
    """What DGL's DataLoader yields, its blocks[0].srcdata["feat"] holding the
    features (no copy), blocks[-1].dstdata["label"] the seeds' labels, and
    edata["w"] the block values where the sampler gives them: LADIES' and
    FastGCN's weights, labor-star's normalised Horvitz-Thompson weights (DGL's
    LaborSampler calls its own edata["edge_weights"]), walk visit counts.

    A node minibatch: (input_nodes, output_nodes, blocks). A link minibatch:
    (input_nodes, pair_graph, neg_pair_graph, blocks), as over DGL's
    as_edge_prediction_sampler with a negative sampler ((input_nodes,
    pair_graph, blocks) without negatives): pair_graph holds the positives and
    neg_pair_graph the negatives, both over the minibatch's endpoints (node i
    is input_nodes[i]; the endpoints come first), pair_graph.edata[dgl.EID]
    the positives' input ids and edata["label"] their labels."""
    dgl = _require("dgl", "to_dgl")
    torch = _require("torch", "to_dgl")
    blocks = []
    device = mb.device  # a GPU loader's arrays are CUDA arrays; the host's move there
    no_edge_ids = torch.empty(0, dtype=torch.int64, device=device)
    for b in mb.blocks:
        # A block's rows are its destinations: bulkgnn's CSR block is DGL's CSC, the
        # format DGL's message passing reads, so DGL neither converts nor sorts it;
        # edge ids follow the stored order, which is the order of b.values.
        csc = (torch.from_dlpack(b.indptr).long(), torch.from_dlpack(b.indices).long(),
               no_edge_ids)
        block = dgl.create_block(("csc", csc), num_src_nodes=b.num_src, num_dst_nodes=b.num_dst)
        if b.values is not None:
            block.edata["w"] = torch.from_dlpack(b.values)
        if e_id:
            block.edata[dgl.EID] = torch.from_dlpack(b.e_id).to(device)  # as DGL's samplers set it
        blocks.append(block)
    if mb.features is not None:
        blocks[0].srcdata["feat"] = torch.from_dlpack(mb.features)
    if mb.labels is not None and not mb.is_link:
        blocks[-1].dstdata["label"] = torch.from_dlpack(mb.labels).long().to(device)
    input_nodes = torch.from_dlpack(mb.input_nodes).long()
    if mb.is_link:
        return (input_nodes, *_dgl_pair_graphs(mb, dgl, torch), blocks)
    return input_nodes, torch.from_dlpack(mb.seeds).long(), blocks


def _dgl_pair_graphs(mb, dgl, torch):
    """(pair_graph, neg_pair_graph), or (pair_graph,) without negatives."""
    nodes = len(mb.seeds)
    index = torch.from_dlpack(mb.edge_label_index).long()
    input_id = torch.from_dlpack(mb.input_id).long()
    positives = len(input_id)
    pair = dgl.graph((index[0, :positives], index[1, :positives]), num_nodes=nodes)
    pair.edata[dgl.EID] = input_id
    if mb.dst_neg_index is not None:  # triplet: each positive's source, its corrupted tails
        tails = torch.from_dlpack(mb.dst_neg_index).long().reshape(positives, -1)
        pair.edata["label"] = torch.ones(positives)
        negative_sources = index[0].repeat_interleave(tails.shape[1])
        return pair, dgl.graph((negative_sources, tails.reshape(-1)), num_nodes=nodes)
    labels = torch.from_dlpack(mb.edge_label)
    pair.edata["label"] = labels[:positives]
    if index.shape[1] == positives:
        return (pair,)
    return pair, dgl.graph((index[0, positives:], index[1, positives:]), num_nodes=nodes)
