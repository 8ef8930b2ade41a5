"""bulkgnn.define_sampler: samplers written in Python from bulkgnn's matrix operations,
run by the C++ pipeline. Written as a built-in sampler, a program draws its minibatches
(the same digests for any bulk size and thread count); bad programs are refused by name."""

import json
import pathlib
import subprocess
import tempfile
import unittest

import numpy as np

import bulkgnn
from support import CLI, CORA, positives_of, requires_torch, sampled_pairs

EXAMPLES = pathlib.Path("sampler/program/examples")


def ladies(hop):
    q = hop.frontier_selection(scale="gcn-squared")
    p = hop.multiply(q, self_loops=True)
    drawn = hop.sample_rows(p, weights="value")
    sources = hop.sources(drawn)
    block = hop.induce(sources, self_loops=True, inverse_probabilities=p)
    return sources, hop.normalize_rows(block)


def sage(hop):
    return hop.relabel(hop.sample_rows(hop.frontier_rows()))


def epoch_digest(ds, sampler, fanouts, **options):
    digest = bulkgnn.RunDigest()
    for mb in bulkgnn.NeighborLoader(ds, ds.split()[0], fanouts=fanouts, batch_size=64,
                                     sampler=sampler, shuffle=True, seed=3, **options):
        digest.add(mb.digest())
    return digest.value


class SamplerProgram(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ds = bulkgnn.Dataset(str(CORA))

    def test_ladies_written_in_python_draws_the_built_in_ladies_minibatches(self):
        program = bulkgnn.define_sampler("py-ladies", ladies, layer="gcn")
        self.assertEqual(program.fanout, "per minibatch")
        expected = epoch_digest(self.ds, "ladies", [256, 256])
        for options in ({"bulk": 1}, {"bulk": 8, "threads": 1}, {"bulk": 32, "threads": 2}):
            self.assertEqual(epoch_digest(self.ds, program, [256, 256], **options), expected,
                             options)
        self.assertEqual(epoch_digest(self.ds, "py-ladies", [256, 256]), expected)

    def test_sage_written_in_python_draws_the_built_in_sage_minibatches(self):
        program = bulkgnn.define_sampler("py-sage", sage)
        self.assertEqual((program.layer, program.fanout), ("sage", "per destination"))
        self.assertEqual(epoch_digest(self.ds, program, [10, 5], bulk=3),
                         epoch_digest(self.ds, "sage", [10, 5], bulk=16))

    def test_labor_written_in_python_draws_the_built_in_labor_minibatches(self):
        program = bulkgnn.define_sampler("py-labor", lambda hop: hop.relabel(
            hop.sample_rows(hop.frontier_rows(), shared_variates=True)))
        self.assertEqual(epoch_digest(self.ds, program, [10, 5], bulk=2),
                         epoch_digest(self.ds, "labor", [10, 5], bulk=16))

    def test_blocks_carry_the_programs_weights(self):
        program = bulkgnn.define_sampler("py-ladies", ladies, layer="gcn")
        ours = next(iter(bulkgnn.NeighborLoader(self.ds, self.ds.split()[0], fanouts=[64],
                                                batch_size=16, sampler=program, seed=1)))
        theirs = next(iter(bulkgnn.NeighborLoader(self.ds, self.ds.split()[0], fanouts=[64],
                                                  batch_size=16, sampler="ladies", seed=1)))
        a, b = ours.blocks[0], theirs.blocks[0]
        for field in ("indptr", "indices", "values"):
            np.testing.assert_array_equal(np.asarray(getattr(a, field)),
                                          np.asarray(getattr(b, field)), field)
        row_sums = np.add.reduceat(np.asarray(a.values), np.asarray(a.indptr)[:-1])
        np.testing.assert_allclose(row_sums, 1, rtol=1e-5)

    def test_a_saved_program_runs_in_the_cli_as_the_example_file_does(self):
        program = bulkgnn.define_sampler("py-frontier-count", lambda hop: _frontier_count(hop))
        with tempfile.TemporaryDirectory() as tmp:
            saved = pathlib.Path(tmp) / "program.json"
            program.save(saved)
            self.assertEqual(json.loads(saved.read_text())["name"], "py-frontier-count")
            self.assertEqual(bulkgnn.load_sampler_program(saved).name, "py-frontier-count")
            digests = [_cli_digest(["--sampler-program", str(path)])
                       for path in (saved, EXAMPLES / "frontier-count.json")]
        self.assertEqual(digests[0], digests[1])

    def test_defining_the_same_program_again_is_harmless_and_another_is_refused(self):
        self.assertEqual(bulkgnn.define_sampler("py-sage", sage).name, "py-sage")
        with self.assertRaisesRegex(ValueError, "a different program is registered"):
            bulkgnn.define_sampler("py-sage", ladies)
        with self.assertRaisesRegex(ValueError, "a built-in sampler has that name"):
            bulkgnn.define_sampler("ladies", ladies)

    def test_bad_programs_are_refused_naming_what_is_wrong(self):
        with self.assertRaisesRegex(ValueError, "scale must be one of one, gcn-squared"):
            bulkgnn.define_sampler("bad", lambda hop: hop.frontier_selection(scale="two"))
        with self.assertRaisesRegex(ValueError, r"must return \(sources, block\)"):
            bulkgnn.define_sampler("bad", lambda hop: hop.frontier_rows())
        other = bulkgnn.Hop()
        with self.assertRaisesRegex(ValueError, "must be a value of this hop"):
            bulkgnn.define_sampler("bad", lambda hop: hop.relabel(other.frontier_rows()))
        with self.assertRaisesRegex(ValueError, r"define_sampler\('bad'\): sampler program "
                                                r"'bad', hop step 1 \(relabel\): drawn"):
            bulkgnn.define_sampler("bad", lambda hop: hop.relabel(hop.frontier_selection()))
        with self.assertRaisesRegex(ValueError, "a hop draws once"):
            bulkgnn.define_sampler("bad", lambda hop: hop.relabel(
                hop.sample_rows(hop.frontier_rows())
                if hop.sample_rows(hop.frontier_rows()) else None))
        with self.assertRaisesRegex(ValueError, "must be a multiply with self_loops"):
            bulkgnn.define_sampler("bad", _unnormalisable)
        with self.assertRaisesRegex(ValueError, "unknown layer kind 'gat'"):
            bulkgnn.define_sampler("bad", sage, layer="gat")
        with self.assertRaisesRegex(ValueError, "sampler must be one of"):
            bulkgnn.NeighborLoader(self.ds, self.ds.split()[0], fanouts=[5], sampler=object())

    @requires_torch
    def test_link_minibatches_leave_their_edges_out_of_a_per_destination_program(self):
        program = bulkgnn.define_sampler("py-sage", sage)
        split = bulkgnn.random_link_split(self.ds, seed=0)

        def seed_edges_sampled(exclude):
            loader = bulkgnn.LinkNeighborLoader(self.ds, num_neighbors=[-1, 5], batch_size=64,
                                                edge_label_index=split["train"], sampler=program,
                                                exclude=exclude)
            found = 0
            for mb in loader:
                pairs = sampled_pairs(mb)
                for s, t in zip(*(ids.tolist() for ids in positives_of(mb))):
                    found += ((s, t) in pairs) + ((t, s) in pairs)
            return found

        self.assertGreater(seed_edges_sampled("none"), 100)
        self.assertEqual(seed_edges_sampled("reverse"), 0)
        layer_wise = bulkgnn.define_sampler("py-ladies", ladies, layer="gcn")
        with self.assertRaisesRegex(ValueError, "py-ladies"):
            list(bulkgnn.LinkNeighborLoader(self.ds, num_neighbors=[64], batch_size=64,
                                            edge_label_index=split["train"],
                                            sampler=layer_wise))


def _frontier_count(hop):
    links = hop.multiply(hop.frontier_selection(scale="one"), self_loops=True)
    sources = hop.sources(hop.sample_rows(links, weights="value"))
    block = hop.induce(sources, self_loops=True, inverse_probabilities=links)
    return sources, hop.normalize_rows(block)


def _unnormalisable(hop):
    p = hop.multiply(hop.frontier_selection(), self_loops=False)
    sources = hop.sources(hop.sample_rows(p, weights="value"))
    return sources, hop.induce(sources, inverse_probabilities=p)


def _cli_digest(arguments):
    out = subprocess.run([CLI, "sample", "--quiet", str(CORA), "--fanouts", "128,128",
                          *arguments], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith("digest")][-1]


if __name__ == "__main__":
    unittest.main()
