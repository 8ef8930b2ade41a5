#!/usr/bin/env python3
"""The parts of scripts/gpu_check.sh that read CMake's and CTest's JSON.

  gpu-benchmarks BUILD_DIR SOURCE_DIR
      One line per GPU benchmark: "target<TAB>absolute path of the program".
      A GPU benchmark is any executable target with a source file under
      benchmarks/gpu/ (read from the CMake file API reply, which
      gpu_check.sh asks for before it configures), wherever its
      add_executable() sits.
  sanitize SANITIZER TOOL CTEST_JSON SECONDS [--dry-run]
      Runs the tests that `ctest --show-only=json-v1` listed in CTEST_JSON
      (those labelled gpu) under `SANITIZER --tool TOOL` (SANITIZER: the
      compute-sanitizer program), in their
      working directories with their environment, within SECONDS in all;
      fails naming each program with a report. The GoogleTest cases of one
      program are merged into one run with a joined --gtest_filter, so that
      each program starts under the sanitizer once. --dry-run prints the
      commands only (a machine without a GPU).
"""
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time


def gpu_benchmarks(build_dir: str, source_dir: str) -> None:
    reply = pathlib.Path(build_dir) / ".cmake" / "api" / "v1" / "reply"
    indexes = sorted(reply.glob("index-*.json"))
    if not indexes:
        sys.exit(f"gpu_check_helper: no CMake file API reply in {reply}; was the query written before configuring?")
    index = json.loads(indexes[-1].read_text())
    codemodel = index["reply"]["codemodel-v2"]["jsonFile"]
    model = json.loads((reply / codemodel).read_text())
    build = pathlib.Path(build_dir).resolve()
    source = pathlib.Path(source_dir).resolve()
    gpu_dir = source / "benchmarks" / "gpu"
    for target_ref in model["configurations"][0]["targets"]:
        target = json.loads((reply / target_ref["jsonFile"]).read_text())
        if target.get("type") != "EXECUTABLE":
            continue
        sources = [(source / s["path"]).resolve() for s in target.get("sources", [])]
        if not any(gpu_dir in s.parents for s in sources):
            continue
        artifact = build / target["artifacts"][0]["path"]
        print(f"{target['name']}\t{artifact}")


def sanitizer_runs(ctest_json: str) -> list[tuple[str, dict[str, str], list[str]]]:
    """(working directory, environment additions, command) per program."""
    tests = json.loads(pathlib.Path(ctest_json).read_text()).get("tests", [])
    runs = []
    merged: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for test in tests:
        command = test.get("command")
        if not command:
            continue
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        workdir = props.get("WORKING_DIRECTORY", ".")
        env = tuple(props.get("ENVIRONMENT", []))
        filters = [a for a in command[1:] if a.startswith("--gtest_filter=")]
        others = [a for a in command[1:]
                  if not a.startswith("--gtest_filter=") and a != "--gtest_also_run_disabled_tests"]
        if len(filters) == 1 and not others:
            merged.setdefault((workdir, command[0], env), []).append(filters[0].split("=", 1)[1])
        else:
            runs.append((workdir, env, command))
    for (workdir, program, env), names in merged.items():
        runs.append((workdir, env, [program, "--gtest_filter=" + ":".join(names)]))
    return [(w, dict(e.split("=", 1) for e in env), c) for w, env, c in runs]


def sanitize(sanitizer: str, tool: str, ctest_json: str, seconds: float, dry_run: bool) -> None:
    runs = sanitizer_runs(ctest_json)
    if not runs:
        sys.exit(f"gpu_check_helper: {ctest_json} lists no tests to run under compute-sanitizer")
    deadline = time.monotonic() + seconds
    failed = []
    for workdir, env, command in runs:
        # Child processes too: CLI tests run the bulkgnn program.
        full = [sanitizer, "--tool", tool, "--error-exitcode", "97",
                "--target-processes", "all", *command]
        print("$ (cd " + shlex.quote(workdir) + " && " +
              " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) +
              (" " if env else "") + shlex.join(full) + ")", flush=True)
        if dry_run:
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            failed.append(f"{command[0]} (not run: out of time)")
            continue
        try:
            rc = subprocess.run(full, cwd=workdir, env={**os.environ, **env}, timeout=left).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        print(f"# exit status {rc}", flush=True)
        if rc != 0:
            failed.append(f"{pathlib.Path(command[0]).name} (exit {rc})")
    if failed:
        sys.exit(f"gpu_check_helper: {tool} failed in: " + ", ".join(failed))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "gpu-benchmarks":
        gpu_benchmarks(sys.argv[2], sys.argv[3])
    elif len(sys.argv) in (6, 7) and sys.argv[1] == "sanitize":
        sanitize(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6:] == ["--dry-run"])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
