"""bulkgnn.define_sampler: a sampler written in Python as one hop's steps over the
matrix operations bulkgnn's own samplers are made of.

The hop function runs once, on symbolic values; what it did becomes a program (JSON)
that the C++ pipeline runs at every hop of every bulk, with the built-in samplers'
kernels and random streams: no Python per minibatch, and the same minibatches for any
thread count, bulk size and rank count. LADIES, written this way, draws what
sampler="ladies" draws, bit for bit:

    def ladies(hop):
        q = hop.frontier_selection(scale="gcn-squared")  # Q(j, u) = 1/(deg(u) + 1)^2
        p = hop.multiply(q, self_loops=True)              # Q·(A + I), a row per minibatch
        drawn = hop.sample_rows(p, weights="value")       # fanouts[hop] columns per row
        sources = hop.sources(drawn)                      # the frontier, then drawn columns
        block = hop.induce(sources, self_loops=True, inverse_probabilities=p)
        return sources, hop.normalize_rows(block)

    my_ladies = bulkgnn.define_sampler("my-ladies", ladies, layer="gcn")
    loader = bulkgnn.NeighborLoader(ds, sampler=my_ladies, fanouts=[512, 512])
    my_ladies.save("my-ladies.json")   # bulkgnn train --sampler-program my-ladies.json
"""

import json
import os

from . import _bulkgnn, _samplers
from ._samplers import SamplerProgram

_FORMAT = "bulkgnn-sampler-program"
_VERSION = 1


class Value:
    """A value of the hop being written (a matrix, a vertex list or a block), named
    after the step that made it. Hop.frontier is the hop's frontier."""

    def __init__(self, hop, name):
        self._hop = hop
        self.name = name

    def __repr__(self):
        return f"<bulkgnn sampler program value {self.name!r}>"


def _choice(what, value, choices):
    if value not in choices:
        raise ValueError(f"define_sampler: {what} must be one of {', '.join(choices)}; "
                         f"got {value!r}")
    return value


class Hop:
    """What a define_sampler hop function receives: the frontier, and one method per
    operation. Rows of a matrix are per destination (frontier_rows: one per frontier
    vertex) or per minibatch (frontier_selection and what is made from it); columns are
    vertex ids. A block has one row per destination and the sources as columns."""

    def __init__(self):
        self._steps = []
        self.frontier = Value(self, "frontier")

    def _name(self, op):
        return f"{op}{len(self._steps)}"

    def _read(self, value, what):
        if not isinstance(value, Value) or value._hop is not self:
            raise ValueError(f"define_sampler: {what} must be a value of this hop (what one of "
                             f"its methods returned, or hop.frontier); got {value!r}")
        return value.name

    def _step(self, op, **fields):
        value = Value(self, self._name(op))
        self._steps.append({"op": op, **fields, "out": value.name})
        return value

    def frontier_rows(self):
        """The frontier's rows of A, one per destination (never materialised: a
        sample_rows of them is a node-wise draw from the graph)."""
        return self._step("frontier_rows")

    def frontier_selection(self, scale="one"):
        """Q, one row per minibatch over its frontier's vertices: 1 each ("one") or
        LADIES' 1/(deg(u) + 1)^2 ("gcn-squared")."""
        return self._step("frontier_selection",
                          scale=_choice("scale", scale, ("one", "gcn-squared")))

    def multiply(self, matrix, self_loops=False):
        """matrix·A, or matrix·(A + I) with self_loops, for a per-minibatch matrix."""
        return self._step("multiply", matrix=self._read(matrix, "matrix"),
                          self_loops=bool(self_loops))

    def sample_rows(self, matrix, weights="uniform", replace=False, shared_variates=False):
        """fanouts[hop] entries of each row, uniformly or in proportion to their values
        ("value": edge weights for frontier_rows), without replacement unless replace.
        shared_variates draws the frontier's rows as LABOR-0 does: each column's variate is
        shared by its minibatch's rows, and a row keeps column t iff it is below
        fanout / degree. A hop draws once."""
        fields = {"matrix": self._read(matrix, "matrix"),
                  "weights": _choice("weights", weights, ("uniform", "value")),
                  "replacement": bool(replace)}
        if shared_variates:
            fields["variates"] = "shared"
        return self._step("sample_rows", **fields)

    def relabel(self, drawn):
        """A per-destination draw as the next frontier (the destinations, then what they
        drew in order of first appearance) and the block; returns (sources, block)."""
        name = self._read(drawn, "drawn")
        sources = Value(self, self._name("relabel_sources"))
        block = Value(self, self._name("relabel_block"))
        self._steps.append({"op": "relabel", "drawn": name, "out": sources.name,
                            "block": block.name})
        return sources, block

    def sources(self, matrix):
        """The next frontier of a per-minibatch matrix: each minibatch's destinations,
        then its row's columns in order of first appearance."""
        return self._step("sources", matrix=self._read(matrix, "matrix"))

    def induce(self, sources, self_loops=False, inverse_probabilities=None):
        """The block from the destinations to `sources`: A's entries (A + I's with
        self_loops), each divided by its source's entry in the per-minibatch matrix
        inverse_probabilities when given."""
        fields = {"sources": self._read(sources, "sources"), "self_loops": bool(self_loops)}
        if inverse_probabilities is not None:
            fields["inverse_probabilities"] = self._read(inverse_probabilities,
                                                         "inverse_probabilities")
        return self._step("induce", **fields)

    def normalize_rows(self, block):
        """The block with each row scaled to sum to 1 (the block given is used up)."""
        return self._step("normalize_rows", block=self._read(block, "block"))


def _register(text, origin):
    entry = _bulkgnn.register_sampler_program(text, origin)
    _samplers.refresh()
    return SamplerProgram(text, entry)


def define_sampler(name, hop, layer=None, summary=""):
    """Registers the sampler whose every hop `hop(h)` writes, from the operations of
    bulkgnn.Hop h, returning (sources, block). layer: the layer its blocks are made for
    ("sage": patterns averaged; "gcn" or "graph-conv": the block values weigh the
    aggregation); by default "gcn" where it induces its blocks, "sage" otherwise.
    Defining the same program again returns it again; another program under a taken
    name is refused. Returns a bulkgnn.SamplerProgram."""
    if not callable(hop):
        raise ValueError(f"define_sampler: hop must be a function of one bulkgnn.Hop, got "
                         f"{hop!r}")
    h = Hop()
    result = hop(h)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise ValueError("define_sampler: the hop function must return (sources, block), got "
                         f"{result!r}")
    sources, block = (h._read(v, what) for v, what in zip(result, ("sources", "block")))
    if layer is None:
        layer = "gcn" if any(step["op"] == "induce" for step in h._steps) else "sage"
    program = {"format": _FORMAT, "version": _VERSION, "name": name, "summary": summary,
               "layer": layer, "hop": h._steps, "sources": sources, "block": block}
    return _register(json.dumps(program, indent=2), f"define_sampler({name!r})")


def load_sampler_program(path):
    """Registers the sampler program in the JSON file `path` (SamplerProgram.save's, or
    the CLI's --sampler-program files) and returns it."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return _register(text, os.fspath(path))
