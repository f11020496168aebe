#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of memcert from Debian's packages.
# Idempotent: skips apt-get entirely when everything is already present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config
      libgmp-dev libmpfr-dev libboost-dev libeigen3-dev catch2
      nlohmann-json3-dev libcli11-dev zlib1g-dev
      python3 python3-dev python3-pybind11 python3-numpy python3-pytest  # the Python module and its tests
      libopenmpi-dev openmpi-bin python3-matplotlib)  # sweep: MPI sharding, plots
if [ "${1:-}" = "--clang" ]; then
  # CI's second compiler (.ci/run builds the libraries and the CLI with it, -Werror).
  pkgs=(clang-14)
fi
if [ "${1:-}" = "--bench" ]; then
  # Peers measured side by side in bench/ (never linked by the library).
  pkgs+=(libflint-dev libflint-arb-dev liblapack-dev libopenblas-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
