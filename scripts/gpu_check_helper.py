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
      compute-sanitizer program), in their working directories with their
      environment, one process per test, eight at a time on the one GPU,
      each within SECONDS; fails naming each test program with a report or
      a timeout. Racecheck leaves out the CLI's tests (RACECHECK_SKIPS).
      --dry-run prints the commands only (a machine without a GPU).
"""
import concurrent.futures
import json
import os
import pathlib
import shlex
import subprocess
import sys


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


RACECHECK_SKIPS = {"cuda_cli_test"}


def sanitizer_runs(ctest_json: str) -> list[tuple[str, dict[str, str], list[str]]]:
    """(working directory, environment additions, command) per test: one
    process each, so that they run side by side under the sanitizer."""
    tests = json.loads(pathlib.Path(ctest_json).read_text()).get("tests", [])
    runs = []
    for test in tests:
        command = test.get("command")
        if not command:
            continue
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        env = dict(e.split("=", 1) for e in props.get("ENVIRONMENT", []))
        runs.append((props.get("WORKING_DIRECTORY", "."), env, command))
    return runs


def sanitize(sanitizer: str, tool: str, ctest_json: str, seconds: float, dry_run: bool) -> None:
    runs = sanitizer_runs(ctest_json)
    if not runs:
        sys.exit(f"gpu_check_helper: {ctest_json} lists no tests to run under compute-sanitizer")
    if tool == "racecheck":
        # Racecheck looks for shared-memory hazards inside kernels, which the
        # other programs run in-process; the CLI's tests only spawn the CLI
        # on real data, which takes minutes under the tool.
        runs = [r for r in runs if pathlib.Path(r[2][0]).name not in RACECHECK_SKIPS]
    commands = []
    for workdir, env, command in runs:
        # Child processes too: CLI tests run the bulkgnn program. API errors
        # are not reported: NCCL probes its kernels for other architectures
        # (cudaErrorNoKernelImageForDevice, handled), and bulkgnn checks
        # every call's status itself.
        full = [sanitizer, "--tool", tool, "--error-exitcode", "97", "--report-api-errors", "no",
                "--target-processes", "all", *command]
        print("$ (cd " + shlex.quote(workdir) + " && " +
              " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) +
              (" " if env else "") + shlex.join(full) + ")", flush=True)
        commands.append((workdir, env, full, pathlib.Path(command[0]).name))
    if dry_run:
        return
    # The programs share the GPU at the same time: a lease is minutes long.
    def run(item: tuple[str, dict[str, str], list[str], str]) -> tuple[str, object, str]:
        workdir, env, full, program = item
        try:
            done = subprocess.run(full, cwd=workdir, env={**os.environ, **env}, timeout=seconds,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return program, done.returncode, done.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            return program, "timeout", out
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, len(commands))) as pool:
        for program, rc, output in pool.map(run, commands):
            print(f"==== {program}\n{output}# exit status {rc}", flush=True)
            if rc != 0:
                failed.append(f"{program} (exit {rc})")
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
