#!/usr/bin/env bash
# Installs the Debian packages in third_party/packages.txt that are missing.
# As root it uses apt-get; otherwise it prints the exact command and fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(grep -v '^[[:space:]]*#' "$here/packages.txt" | awk 'NF {print $1}')
missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "halo: error: missing packages: ${missing[*]}" >&2
    echo "halo: run as root: apt-get update && $cmd" >&2
    exit 1
fi
echo "halo: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "halo: dependencies installed" >&2
