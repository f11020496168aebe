"""The Coq library of the exports (proofs/coq/Memcert*.v) compiled once for all the tests/coq suites.

Every exported directory carries a copy of the library, and its check.sh compiles that copy first: the
same source with the same command (`coqc -q -Q . Memcert MemcertRank.v`), dozens of times per test run.
`use_compiled_library(work)` compiles proofs/coq once (in WORK's parent, shared by the suites that ctest
runs side by side, under a lock; reused while the sources and coqc are unchanged) and puts first on PATH
a `coqc` that, asked for exactly that command on a file byte-identical to proofs/coq's, copies the
compiled files instead of compiling again; any other call (the data, the witnesses, the theorems, the
mutants, or a library file that differs) runs the real coqc. check.sh itself runs unchanged.
"""
import fcntl
import hashlib
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(HERE, "..", "..", "proofs", "coq")
ORDER = ["MemcertRank", "MemcertKs", "MemcertKruskal", "MemcertDana24", "MemcertTheorem1"]  # build.sh's

SHIM = r"""#!/bin/sh
# coqc, with proofs/coq's library files served from their one compilation (tests/coq/coqlib.py).
lib='@LIB@'
if [ "$#" -eq 5 ] && [ "$1" = -q ] && [ "$2" = -Q ] && [ "$3" = . ] && [ "$4" = Memcert ]; then
  case "$5" in
    Memcert*.v)
      m=${5%.v}
      if [ -f "$lib/$m.vo" ] && cmp -s "$5" "$lib/$m.v"; then
        cp "$lib/$m.vo" "$lib/$m.vok" "$lib/$m.vos" "$lib/$m.glob" . && exit 0
      fi ;;
  esac
fi
exec '@COQC@' "$@"
"""


def use_compiled_library(work):
    """Compile proofs/coq once (or find it compiled) and put the serving coqc first on PATH. Returns the
    library's directory, or None when coqc is absent (the caller skips)."""
    coqc = shutil.which("coqc")
    if coqc is None:
        return None
    key = hashlib.sha256(subprocess.run([coqc, "--version"], capture_output=True).stdout)
    for m in ORDER:
        key.update(m.encode() + b"\0" + open(os.path.join(SOURCES, m + ".v"), "rb").read())
    root = os.path.join(os.path.dirname(os.path.abspath(work)), "coq_library")
    os.makedirs(root, exist_ok=True)
    home = os.path.join(root, key.hexdigest()[:16])
    lib = os.path.join(home, "lib")
    with open(os.path.join(root, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the suites that start together wait for one compilation
        if not os.path.exists(os.path.join(home, "done")):
            shutil.rmtree(home, ignore_errors=True)
            os.makedirs(lib)
            for m in ORDER:
                shutil.copy(os.path.join(SOURCES, m + ".v"), lib)
                r = subprocess.run([coqc, "-q", "-Q", ".", "Memcert", m + ".v"], cwd=lib, capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(f"coqlib: proofs/coq/{m}.v does not compile: {(r.stdout + r.stderr)[-800:]}")
            os.makedirs(os.path.join(home, "bin"))
            shim = os.path.join(home, "bin", "coqc")
            with open(shim, "w") as f:
                f.write(SHIM.replace("@LIB@", lib).replace("@COQC@", coqc))
            os.chmod(shim, 0o755)
            open(os.path.join(home, "done"), "w").close()
    os.environ["PATH"] = os.path.join(home, "bin") + os.pathsep + os.environ.get("PATH", "")
    return lib
