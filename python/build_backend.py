"""An in-tree PEP 517 build backend for memcert's Python package, with no build requirements, so
`pip install ./python` (or `pip install .` at the top of the source tree) works offline.

build_wheel configures and builds the targets memcert_python and memcert with CMake (the source tree
is this file's parent directory; the build directory is $MEMCERT_BUILD_DIR, default build-wheel/ at the
top of the source tree, kept for incremental rebuilds) and writes the wheel itself: the package
memcert/ (its .py files, the extension _memcert and the memcert executable as memcert/bin/memcert, which
sweep's cells run), with METADATA, WHEEL and RECORD. Needs what the CMake build needs (docs/CPP.md:
scripts/install-deps.sh) and nothing from the network.
"""
import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def _version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        m = re.search(r"project\(memcert\s+VERSION\s+([0-9.]+)", f.read())
    return m.group(1) if m else "0"


def _tag():
    impl = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (impl, impl, plat)


def _metadata():
    return ("Metadata-Version: 2.1\nName: memcert\nVersion: %s\n"
            "Summary: Exact-arithmetic verification of memorization theory for Transformers\n"
            "License: see LICENSE\nRequires-Python: >=3.8\nRequires-Dist: numpy\n" % _version())


def _build():
    build = os.environ.get("MEMCERT_BUILD_DIR") or os.path.join(SOURCE, "build-wheel")
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        cmd = ["cmake", "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DMEMCERT_BUILD_PYTHON=ON",
               "-DMEMCERT_BUILD_TESTS=OFF", "-DMEMCERT_BUILD_EXAMPLES=OFF", "-DPython_EXECUTABLE=" + sys.executable]
        if shutil.which("ccache"):
            cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        subprocess.check_call(cmd, stdout=sys.stderr)
    jobs = os.environ.get("MEMCERT_BUILD_JOBS", str(os.cpu_count() or 2))
    subprocess.check_call(["cmake", "--build", build, "-j", jobs, "--target", "memcert_python", "memcert"],
                          stdout=sys.stderr)
    return build


def _files(build):
    """(path in the wheel, file on disk) of the package."""
    pkg = os.path.join(build, "python", "memcert")
    out = []
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or (name.startswith("_memcert") and name.endswith(".so")):
            out.append(("memcert/" + name, os.path.join(pkg, name)))
    if not any(n.startswith("memcert/_memcert") for n, _ in out):
        raise RuntimeError("the extension memcert/_memcert*.so was not built in " + pkg)
    exe = os.path.join(build, "memcert")
    if os.path.isfile(exe):
        out.append(("memcert/bin/memcert", exe))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _dist_info(tag):
    di = "memcert-%s.dist-info" % _version()
    wheel = "Wheel-Version: 1.0\nGenerator: memcert build_backend\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    return di, {di + "/METADATA": _metadata().encode(), di + "/WHEEL": wheel.encode()}


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di, files = _dist_info(_tag())
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for name, data in files.items():
        if name.endswith("METADATA"):
            with open(os.path.join(metadata_directory, name), "wb") as f:
                f.write(data)
    return di


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build = _build()
    tag = _tag()
    di, meta = _dist_info(tag)
    name = "memcert-%s-%s.whl" % (_version(), tag)
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, path in _files(build):
            with open(path, "rb") as f:
                data = f.read()
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            mode = 0o755 if os.access(path, os.X_OK) and not arc.endswith(".py") else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16  # pip keeps the x bit of regular files only
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(_record_line(arc, data))
        for arc, data in meta.items():
            z.writestr(arc, data)
            record.append(_record_line(arc, data))
        record.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(record) + "\n")
    return name
