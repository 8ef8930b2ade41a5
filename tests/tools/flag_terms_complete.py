#!/usr/bin/env python3
"""Every option field a library error names has its flag in tools/.

Libraries name fields (`loader_options.bulk`); the CLI rewrites them into flags
(`--bulk`) through the flag_of_field table in tools/distribution.cpp
(in_flag_terms). A field named in a library's message but missing from the
table would reach a CLI user untranslated, so this scans every string literal
of the libraries for option-struct fields and fails naming each one the table
lacks (or each table entry no library names any more).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIBRARIES = ["core", "kernels", "comm", "data", "sampler", "loader", "trainer", "distributed",
             "session"]
# The option structs whose fields a CLI flag sets.
STRUCTS = ["layout_options", "cluster_options", "sampler_options", "train_options",
           "loader_options", "model_config", "adam_options", "execution_options",
           "placement_options", "sampling_plan", "ogb_import_options", "link_train_options",
           "link_split_options", "negative_sampling", "link_options"]
FIELD = re.compile(r"\b(?:" + "|".join(STRUCTS) + r")\.[a-z_]+")
STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
TABLE_ENTRY = re.compile(r'\{"([a-z_]+\.[a-z_]+)",\s*"(--[a-z-]+)"\}')


def fields_named_by_libraries():
    named = {}
    for library in LIBRARIES:
        for path in sorted((ROOT / library).rglob("*")):
            if path.suffix not in {".cpp", ".hpp", ".cu", ".cuh"}:
                continue
            for literal in STRING_LITERAL.findall(path.read_text(errors="replace")):
                for field in FIELD.findall(literal):
                    named.setdefault(field, str(path.relative_to(ROOT)))
    return named


def fields_in_table():
    source = (ROOT / "tools" / "distribution.cpp").read_text()
    table = source[source.index("flag_of_field[]"):]
    table = table[:table.index("};")]
    return dict(TABLE_ENTRY.findall(table))


def main():
    named = fields_named_by_libraries()
    table = fields_in_table()
    if not named or not table:
        sys.exit("flag_terms_complete: found no fields or no table; has the layout changed?")
    missing = sorted(set(named) - set(table))
    stale = sorted(set(table) - set(named))
    for field in missing:
        print(f"{field} (named in {named[field]}) has no flag in tools/distribution.cpp "
              f"flag_of_field")
    for field in stale:
        print(f"flag_of_field maps {field}, which no library message names")
    if missing or stale:
        sys.exit(1)
    print(f"{len(table)} fields, each named by a library and mapped to its flag")


if __name__ == "__main__":
    main()
