#!/usr/bin/env python3
"""Writes one benchmark run as a result file in bench/results/ (the format is in bench/README.md).

    record.py BENCH ROWS_FILE --command CMD [--threads N] [--memcert VERSION] [--peer-threads TEXT] [--build DIR]
                               [--baseline DIR]

ROWS_FILE holds one figure row per line, as tab-separated key=value fields (a value that reads as a number
is stored as a number). The machine (CPU model, cores, architecture), the date (UTC) and the load average
(1, 5, 15 min, read when record.py runs, that is right after the measurement) are added here. The file goes
to $MEMCERT_BENCH_RESULTS (default: bench/results/ of this repository), named DATE-TIME-BENCH.json
(DATE-TIME-BENCH-2.json, ... for more runs in the same minute); MEMCERT_BENCH_RESULTS=off writes nothing.
The path written is printed on stderr. With --build, the source tree the timed binary was built from
(CMAKE_HOME_DIRECTORY in DIR/CMakeCache.txt) is recorded as its git commit, and whether it had
uncommitted changes outside bench/; with --baseline, the same of the build the before_* figures timed."""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys


def number(text):
    """The value as an int or a finite float when it reads as one, else the text ("-nan" stays text)."""
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if kind is float and not math.isfinite(value):
            return text
        return value
    return text


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(), "arch": platform.machine()}


def source_of(build):
    """{"commit", "dirty"} of the git tree the build directory was configured from, or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            home = next(line.split("=", 1)[1].strip() for line in f if line.startswith("CMAKE_HOME_DIRECTORY:"))
        git = ["git", "-C", home]
        commit = subprocess.run(git + ["rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True)
        status = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench"],
                                capture_output=True, text=True, check=True)  # changes outside the harnesses
    except (OSError, StopIteration, subprocess.CalledProcessError):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench")
    ap.add_argument("rows")
    ap.add_argument("--command", required=True)
    ap.add_argument("--threads", type=number)
    ap.add_argument("--peer-threads")
    ap.add_argument("--memcert")
    ap.add_argument("--build")
    ap.add_argument("--baseline")
    a = ap.parse_args()
    out_dir = os.environ.get("MEMCERT_BENCH_RESULTS",
                             os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    if out_dir == "off":
        return
    figures = []
    with open(a.rows) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            row = {}
            for field in line.split("\t"):
                key, _, value = field.partition("=")
                row[key] = number(value)
            figures.append(row)
    now = datetime.datetime.now(datetime.timezone.utc)
    result = {"bench": a.bench, "date": now.strftime("%Y-%m-%dT%H:%MZ"), "machine": machine(),
              "threads": a.threads, "load": load_average(), "command": a.command}
    if a.peer_threads:
        result["peer_threads"] = a.peer_threads
    if a.memcert:
        result["memcert"] = a.memcert
    if a.build:
        result["source"] = source_of(a.build)
    if a.baseline:
        result["baseline_source"] = source_of(a.baseline)
    result["figures"] = figures
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, now.strftime("%Y-%m-%d-%H%M") + "-" + a.bench)
    path, k = stem + ".json", 2
    while os.path.exists(path):  # two runs of one harness in the same minute: both kept
        path, k = stem + "-" + str(k) + ".json", k + 1
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)
    print("result: " + path, file=sys.stderr)


if __name__ == "__main__":
    main()
