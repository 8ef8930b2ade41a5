"""Epochs of several loaders timed side by side in one process, so that the machine's
noise falls on all of them alike, and what the peers scripts share around them."""

import argparse
import json
import statistics
import time


def consume_bulkgnn_as_pyg(loader):
    """One epoch of bulkgnn minibatches as PyG batches (mb.to_pyg()), features touched;
    the edges they held."""
    edges = 0
    for mb in loader:
        batch = mb.to_pyg()
        float(batch.x[0, 0])
        edges += int(batch.edge_index.shape[1])
    return edges


def consume_pyg(loader):
    """One epoch of a PyG loader, features touched; the edges its batches held."""
    edges = 0
    for batch in loader:
        float(batch.x[0, 0])
        edges += int(batch.edge_index.shape[1])
    return edges


def fit_and_evaluate(model, batches, whole_graph_inputs, labels, masks, epochs):
    """Trains `model` with Adam (lr 0.01) for `epochs` epochs of batches(), each batch
    (inputs, rows, y, weights): model(*inputs)[rows] are the logits of the seeds labelled y,
    and weights, where not None, weigh each seed's cross-entropy in a summed loss (else the
    mean); a batch without seeds is skipped. After every epoch the model predicts the whole
    graph, model(*whole_graph_inputs). Returns the test accuracy at the epoch of the best
    validation accuracy (masks: train, valid, test) and the median epoch's training seconds."""
    import torch
    cross_entropy = torch.nn.functional.cross_entropy
    _, valid_mask, test_mask = masks
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    best = (-1.0, 0.0)
    seconds = []
    for _ in range(epochs):
        model.train()
        start = time.perf_counter()
        for inputs, rows, y, weights in batches():
            if y.shape[0] == 0:
                continue
            optimizer.zero_grad()
            out = model(*inputs)[rows]
            loss = cross_entropy(out, y) if weights is None else \
                (cross_entropy(out, y, reduction="none") * weights).sum()
            loss.backward()
            optimizer.step()
        seconds.append(time.perf_counter() - start)
        model.eval()
        with torch.no_grad():
            predicted = model(*whole_graph_inputs).argmax(dim=1)
        valid = float((predicted[valid_mask] == labels[valid_mask]).float().mean())
        if valid > best[0]:
            best = (valid, float((predicted[test_mask] == labels[test_mask]).float().mean()))
    return {"test_acc": best[1], "seconds_per_epoch": statistics.median(seconds)}


def accuracy_cells(runs):
    """A loader's runs as its table row ends: mean ± std test accuracy | median s/epoch."""
    accuracy = [r["test_acc"] for r in runs]
    spread = statistics.stdev(accuracy) if len(accuracy) > 1 else 0
    seconds = statistics.median(r["seconds_per_epoch"] for r in runs)
    return f"{statistics.mean(accuracy):.4f} ± {spread:.4f} | {seconds:.2f} |"


def write_rows(rows, path):
    """The measurements as JSON at `path` (None: nowhere)."""
    if path:
        with open(path, "w") as f:
            json.dump(rows, f, indent=2)
            f.write("\n")


def alternate(systems, repetitions):
    """systems: name -> (loader, consume), consume(loader) running one epoch and returning
    what it counted. One warm-up epoch each, then `repetitions` rounds, each round in an
    order rotated by one. Returns (seconds per name, each epoch's; count per name, of the
    warm-up epoch; median seconds per name)."""
    counts = {name: consume(loader) for name, (loader, consume) in systems.items()}
    seconds = {name: [] for name in systems}
    names = list(systems)
    for repetition in range(repetitions):
        shift = repetition % len(names)
        for name in names[shift:] + names[:shift]:
            loader, consume = systems[name]
            start = time.perf_counter()
            consume(loader)
            seconds[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(times) for name, times in seconds.items()}
    return seconds, counts, medians


def alternated_rows(dataset, systems, repetitions, base, setup=None):
    """alternate() over `systems`, then one row per system (printed as a Markdown table
    row): median seconds per epoch, its ratio to the system named `base`, the counted
    edges; with `setup` (seconds per name), each system's construction time too."""
    seconds, edges, medians = alternate(systems, repetitions)
    rows = []
    for name in systems:
        median = medians[name]
        row = {"dataset": dataset, "system": name, "seconds_per_epoch": median,
               "edges_per_epoch": edges[name], "times_bulkgnn": median / medians[base],
               "all_seconds": seconds[name]}
        setup_cell = ""
        if setup is not None:
            row["setup_seconds"] = setup[name]
            setup_cell = f" {setup[name]:.2f} |"
        rows.append(row)
        print(f"| {dataset} | {name} |{setup_cell} {median:.3f} | {median / medians[base]:.1f}x | "
              f"{edges[name]:,} |", flush=True)
    return rows


def seeds_of(args):
    """The training seeds a train-mode command line asks for."""
    return range(args.first_seed, args.first_seed + args.seeds)


def loader_arguments(description, train_mode=False, epochs=None, extra=None):
    """The command line of a peers script, parsed: datasets, --repetitions and --json,
    and with train_mode a loader|train mode, --seeds, --first-seed and --epochs (seeds
    first_seed .. first_seed + seeds - 1, so that a run can add seeds to an earlier one).
    extra(parser), if given, adds a script's own arguments. Sets 2 torch threads and prints
    the peer libraries' versions."""
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    if train_mode:
        parser.add_argument("mode", choices=["loader", "train"])
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--repetitions", type=int, default=3)
    if train_mode:
        parser.add_argument("--seeds", type=int, default=5)
        parser.add_argument("--first-seed", type=int, default=0)
        parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--json", help="write the measurements here")
    if extra:
        extra(parser)
    args = parser.parse_args()
    import dgl
    import torch
    import torch_geometric
    torch.set_num_threads(2)
    print(f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, "
          f"dgl {dgl.__version__}")
    return args


def loader_or_train_arguments(description, epochs, extra=None):
    """loader_arguments of a script with a loader and a train mode; extra(parser) adds
    the script's own arguments."""
    return loader_arguments(description, train_mode=True, epochs=epochs, extra=extra)
