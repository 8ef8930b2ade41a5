#!/usr/bin/env bash
# Runs a command with TMPDIR set to a fresh empty directory and fails if the
# command leaves anything there, listing what it left:
#
#   scripts/check_no_leftovers.sh ctest --test-dir build -j 2
#
# Exits with the command's status if it failed, 3 if it left files behind.
# The directory is created under $TMPDIR (default /tmp) and removed afterwards.
set -uo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGUMENT...]" >&2
  exit 2
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/bulkgnn-leftovers.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT

TMPDIR="$scratch" "$@"
status=$?

if [ -n "$(ls -A "$scratch")" ]; then
  echo "$0: '$*' left these in TMPDIR:" >&2
  (cd "$scratch" && find . -mindepth 1 -maxdepth 2 | sort | sed 's|^\./|  |') >&2
  echo "  ($(du -sh "$scratch" | cut -f1) in all)" >&2
  [ "$status" -ne 0 ] || status=3
fi
exit "$status"
