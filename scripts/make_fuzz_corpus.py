#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus, fuzz/corpus/<target>/<seed>: small valid
inputs (and a few near misses) of each format, byte for byte reproducible.
Run from anywhere; rewrites the corpus in place."""
import gzip
import json
import pathlib
import struct

corpus = pathlib.Path(__file__).resolve().parent.parent / "fuzz" / "corpus"


def write(target, name, data):
    path = corpus / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def npy(descr, shape, payload, version=1, align=64, fortran=False):
    shape_text = "(%d,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(map(str, shape))
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_text)
    length_bytes = 2 if version == 1 else 4
    prefix = 6 + 2 + length_bytes
    header += " " * ((align - (prefix + len(header) + 1) % align) % align) + "\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + payload


# The ogb_import fuzzer's first byte picks the file (index into its
# ogb_files); the top bit means "the rest is the raw file, gzip and all".
ogb_files = ["0,1\n1,2\n2,3\n", "3\n", "0.5,1\n2,-3e2\n4,5\n6,7.25\n", "0\n1\nnan\n2.0\n",
             "0\n1\n", "2\n", "3\n", '{"add_inverse_edge": false, "num_classes": 3}']
for index, text in enumerate(ogb_files):
    write("ogb_import", "file%d" % index, bytes([index]) + text.encode())
write("ogb_import", "edges_crlf", bytes([0]) + b"0,1\r\n1,2\r\n2,3")
write("ogb_import", "features_one_column", bytes([2]) + b"1\n2\n3\n4\n")
write("ogb_import", "edges_raw_gzip",
      bytes([0x80]) + gzip.compress(b"0,1\n1,2\n2,3\n", mtime=0))
write("ogb_import", "labels_raw_gzip", bytes([0x83]) + gzip.compress(b"0\n1\n2\n0\n", mtime=0))
# Inputs an earlier fuzzing run found to reach new rejection paths (a gzip
# stream cut short, bad numbers, a missing column, ragged feature rows, an id
# out of range, too few labels, broken JSON), kept so short CI runs start there.
write("ogb_import", "edges_gzip_cut_short", b'\x80\x1f\x8b\x08\x00\x00\x00\x00\x00\x02*\x00\x00')
write("ogb_import", "edges_not_a_number", b'\x000u\n')
write("ogb_import", "edges_one_column", b'\x000,1\n3\n')
write("ogb_import", "features_ragged_nan", b'\x020.5,nan\n2.05\n')
write("ogb_import", "train_id_out_of_range", b'\x040\n5\n')
write("ogb_import", "labels_too_few", b'\x030\nnan\n2.0\n')
write("ogb_import", "meta_broken_json", b'\x07{"ad"adedge": falce,: :')

write("npy", "int32_1d", npy("<i4", [3], struct.pack("<3i", 1, -2, 3)))
write("npy", "int64_1d", npy("<i8", [2], struct.pack("<2q", 0, 1 << 40)))
write("npy", "float32_2d", npy("<f4", [2, 3], struct.pack("<6f", 0, 1, 2, 3, 4, 5.5)))
write("npy", "empty", npy("<i4", [0], b""))
write("npy", "scalar", npy("<f4", [], struct.pack("<f", 7)))
write("npy", "version2", npy("<i4", [2], struct.pack("<2i", 5, 6), version=2))
write("npy", "align16", npy("<i8", [1], struct.pack("<q", 9), align=16))
write("npy", "fortran_1d", npy("<i4", [2], struct.pack("<2i", 1, 2), fortran=True))

manifest = {"format": "bulkgnn-native", "version": 1, "name": "tiny", "num_nodes": 4,
            "num_edges": 3, "num_features": 2, "num_classes": 3, "splits": ["s"],
            "arrays": ["indptr.npy", "indices.npy", "edge_weight.npy", "features.npy",
                       "labels.npy", "split/s/train.npy", "split/s/valid.npy",
                       "split/s/test.npy"]}
write("manifest", "full", json.dumps(manifest, indent=2))
write("manifest", "unlisted_arrays", json.dumps({k: v for k, v in manifest.items() if k != "arrays"}))
write("manifest", "graph_only", json.dumps({"format": "bulkgnn-native", "version": 1,
                                            "num_nodes": 4, "num_edges": 3,
                                            "arrays": ["indptr.npy", "indices.npy"]}))


# The checkpoint fuzzer appends the CRC-32 itself.
def checkpoint(header, parameters):
    text = json.dumps(header, separators=(",", ":")).encode()
    body = b"bulkgnn-checkpoint-v1\n" + struct.pack("<Q", len(text)) + text
    for _ in range(3):
        body += struct.pack("<Q", len(parameters)) + struct.pack("<%df" % len(parameters), *parameters)
    return body


fingerprint = {"dataset": "cora", "seed": 0, "hidden": 16}
write("checkpoint", "matching", checkpoint(
    {"fingerprint": fingerprint, "epochs_done": 2, "optimizer_steps": 10,
     "history": [{"epoch": 1, "loss": 1.5}, {"epoch": 2, "loss": 1.2}]}, [0.5, -1.0, 2.0]))
write("checkpoint", "foreign", checkpoint(
    {"fingerprint": dict(fingerprint, seed=1), "epochs_done": 1, "optimizer_steps": 1,
     "history": []}, []))
