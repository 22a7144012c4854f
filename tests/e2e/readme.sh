#!/usr/bin/env bash
# The README's tour, command by command, against what the README says it prints
# (scripts/readme-check.sh: counts, file lists, checksums of files and accuracies to 2 decimals).
cd "$(dirname "$0")/../.." || exit 1
bash scripts/readme-check.sh
