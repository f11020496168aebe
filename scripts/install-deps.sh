#!/usr/bin/env bash
# Installs memcert's dependencies from Debian's packages.
#   (no flag)  everything the build and the whole test suite need (README's second command, CI);
#   --cli      only what the `memcert` executable needs (README's first command): the libraries it
#              links and the headers it compiles against (13 packages: 3.6 MB, and 9.5 MB for Boost's
#              headers, instead of 131 MB);
#   --clang    CI's second compiler and libFuzzer;  --bench  the peers measured in bench/.
# Idempotent: skips apt-get entirely when everything is already present.
set -euo pipefail
cli=(build-essential cmake pkg-config
     libgmp-dev libmpfr-dev libeigen3-dev libboost-dev
     nlohmann-json3-dev libcli11-dev zlib1g-dev)
pkgs=("${cli[@]}" catch2
      python3 python3-dev python3-pybind11 python3-numpy python3-pytest  # the Python module and its tests
      python3-venv  # the test of `pip install ./python` into a fresh venv
      libopenmpi-dev openmpi-bin python3-matplotlib  # sweep: MPI sharding, plots
      python3-torch  # tests/model/torch_files.py: model files written by PyTorch itself
      coq libcoq-mathcomp-ssreflect libcoq-mathcomp-algebra libcoq-mathcomp-zify)  # `export coq`'s proofs (proofs/coq/, tests/coq/)
case "${1:-}" in
  "") ;;
  --cli) pkgs=("${cli[@]}") ;;
  --clang)
    # CI's second compiler (.ci/run builds the libraries and the CLI with it, -Werror) and libFuzzer
    # (scripts/fuzz.sh: the harnesses under ASan + UBSan).
    pkgs=(clang-14 libfuzzer-14-dev) ;;
  --bench) pkgs+=(libflint-dev libflint-arb-dev liblapack-dev libopenblas-dev) ;;  # peers, never linked by the library
  *) echo "install-deps.sh: unknown option '$1' (expected --cli, --clang or --bench)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # Unsafe I/O: dpkg skips its fsync after each unpacked file (the full set in a fresh Debian 12 chroot,
  # once each on a loaded 2-core machine: 4 min 9 s without, 3 min 12 s with); only a power loss during
  # the install could leave a package half-written.
  $SUDO apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
fi
