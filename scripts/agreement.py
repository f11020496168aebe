#!/usr/bin/env python3
"""Engine/checker agreement campaign: the engine never emits a certificate its own checker rejects.

  python3 scripts/agreement.py --memcert build/memcert [--seeds 20] [--budget 50] [--constructs 20]
                               [--jobs 2] [--work DIR] [--claims ID,...] [--json-out FILE]

Part 1, every claim with a search mode (`memcert claims list --json`, "search": true) at seeds 1..--seeds:
`memcert claims search ID --budget B --seed S --cert-dir DIR --json`, then `memcert verify` on every
certificate written. Part 2, --constructs randomized small shapes per construction: `memcert generate
theorem1|ks|dana24`, then `memcert construct theorem1|ks|dana24` on the data (theorem1 at the scales proof,
weyl and network, with and without class labels, the joint-scales family included), then `memcert verify`
on the certificate written.

A disagreement is any of: a certificate the engine built that its in-process checker refused (claims:
"certificate_verified": false with a checker reason; construct: "did not accept" on stderr); a certificate
written that `memcert verify` rejects; a decided claim instance whose certificate is missing; a construct
that exits 0 without a certificate; any exit status outside the command's contract or an "internal error".
Exit 0 iff there are none (the figures are printed either way). Standard library only.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile


def run(cmd, timeout=1800):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout


class Campaign:
    def __init__(self, args):
        self.bin = [args.memcert, "--quiet", "--threads", "1"]
        self.args = args
        self.work = args.work

    def verify(self, path):
        rc, out, err = run(self.bin + ["verify", path, "--json"])
        if rc == 0:
            return None
        try:
            reason = json.loads(out).get("reason", "")
        except ValueError:
            reason = err.strip().splitlines()[-1] if err.strip() else ""
        return "verify exit %s: %s" % (rc, reason)

    # ---- part 1: claims search -----------------------------------------------------------------------
    def search(self, claim, seed):
        d = os.path.join(self.work, "search", claim.replace("/", "_") + "_%d" % seed)
        os.makedirs(d, exist_ok=True)
        rc, out, err = run(self.bin + ["claims", "search", claim, "--budget", str(self.args.budget),
                                       "--seed", str(seed), "--cert-dir", d, "--json"])
        res = {"task": "claims search %s --seed %d --budget %d" % (claim, seed, self.args.budget), "claim": claim,
               "instances": 0, "verified": 0, "undecided": 0, "findings": 0, "disagreements": []}
        bad = res["disagreements"]
        if rc not in (0, 1):
            bad.append("exit %s: %s" % (rc, err.strip()[-300:]))
            return res
        if "internal error" in err:
            bad.append("stderr: " + err.strip()[-300:])
        try:
            j = json.loads(out)
        except ValueError:
            bad.append("stdout is not one JSON object")
            return res
        stem = claim.replace("/", "_")
        for r in j["results"]:
            res["instances"] += 1
            i = r["instance"]
            path = os.path.join(d, "%s-%d.json" % (stem, i))
            if r["outcome"] == "undecided":
                res["undecided"] += 1
            if r["outcome"] == "counterexample" and j.get("expect") == "holds":
                res["findings"] += 1
            if not r["certificate_verified"] and r.get("checker_reason"):
                bad.append("instance %d %s: the engine's certificate was refused by its checker: %s"
                           % (i, json.dumps(r["params"]), r["checker_reason"]))
            if os.path.exists(path):
                why = self.verify(path)
                if why:
                    bad.append("instance %d: %s" % (i, why))
                else:
                    res["verified"] += 1
                    if not r["certificate_verified"]:
                        bad.append("instance %d: verify accepts a certificate the run said was refused" % i)
            elif r["outcome"] != "undecided":
                bad.append("instance %d: %s without a certificate" % (i, r["outcome"]))
        if not self.args.keep:
            shutil.rmtree(d, ignore_errors=True)
        return res

    # ---- part 2: constructions on randomized small shapes --------------------------------------------
    def construct(self, kind, seed):
        rnd = random.Random(1000003 * seed + {"theorem1": 1, "ks": 2, "dana24": 3}[kind])
        d = os.path.join(self.work, "construct", "%s_%d" % (kind, seed))
        os.makedirs(d, exist_ok=True)
        data, cert = os.path.join(d, "data.json"), os.path.join(d, "cert.json")
        gen_seed = str(rnd.randrange(1, 1 << 30))
        if kind == "theorem1":
            if rnd.random() < 0.15:
                gen = ["generate", "theorem1", "--family", "joint-scales", "--T", "4", "--n", "2", "--d", str(rnd.choice([3, 4]))]
                con = ["--heads", "3", "--dh", "2", "--c", "network"]
            else:
                H, n = rnd.randint(1, 4), rnd.randint(2, 3)
                dh = rnd.choice([n, n + 1])
                dd = rnd.randint(n, n + 3)
                r = min(n, dh)
                T = H * (r - 1) + 1 + rnd.choice([0, 0, 1, 2])
                gen = ["generate", "theorem1", "--T", str(T), "--n", str(n), "--d", str(dd)]
                if rnd.random() < 0.3:
                    gen += ["--C", str(rnd.randint(2, min(3, dd)))]
                con = ["--heads", str(H), "--dh", str(dh), "--c", rnd.choice(["proof", "weyl", "network"])]
                if rnd.random() < 0.2:
                    con += ["--skip"]
            con += ["--seed", gen_seed]
        elif kind == "ks":
            gen = ["generate", "ks", "--N", str(rnd.randint(2, 12)), "--n", str(rnd.randint(1, 4)),
                   "--d", str(rnd.randint(1, 3)), "--V", str(rnd.randint(3, 12)), "--C", str(rnd.randint(2, 4))]
            if rnd.random() < 0.3:
                gen += ["--float64"]
            con = ["--seed", gen_seed] + (["--deep-sets"] if rnd.random() < 0.2 else [])
            con += ["--check"] if rnd.random() < 0.5 else []
        else:
            N, S = rnd.randint(2, 6), rnd.randint(1, 3)
            H, dh = rnd.randint(1, 3), rnd.randint(1, 3)
            dd = rnd.randint(max(2, dh), max(2, dh) + 3)
            T = rnd.randint(1, min(N ** S, H * dh + dd))
            gen = ["generate", "dana24", "--N", str(N), "--S", str(S), "--T", str(T)]
            con = ["--heads", str(H), "--dh", str(dh), "--d", str(dd), "--seed", gen_seed]
            con += ["--check"] if rnd.random() < 0.5 else []
        res = {"task": " ".join(gen + ["--seed", gen_seed]) + " | construct " + kind + " " + " ".join(con),
               "runs": 1, "verified": 0, "undecided": 0, "negative": 0, "bad_input": 0, "disagreements": []}
        bad = res["disagreements"]
        rc, out, err = run(self.bin + gen + ["--seed", gen_seed, "--out", data])
        if rc == 2:  # a shape the generator refuses (e.g. too few distinct sequences): not a construction
            res["bad_input"] += 1
            return res
        if rc != 0:
            bad.append("generate exit %s: %s" % (rc, err.strip()[-300:]))
            return res
        rc, out, err = run(self.bin + ["construct", kind, data] + con + ["--out", cert, "--json"])
        if rc not in (0, 1, 2, 3) or "internal error" in err or "did not accept" in err:
            bad.append("construct exit %s: %s" % (rc, err.strip()[-300:]))
        elif rc == 0 and not os.path.exists(cert):
            bad.append("construct exit 0 without a certificate")
        res["undecided"] += rc == 3
        res["negative"] += rc == 1
        res["bad_input"] += rc == 2
        if rc != 0:
            res["note"] = "exit %s: %s" % (rc, (err.strip().splitlines() or [""])[-1][:300])
        if os.path.exists(cert):
            why = self.verify(cert)
            if why:
                bad.append("construct exit %s wrote a certificate the checker rejects: %s" % (rc, why))
            else:
                res["verified"] += 1
        if not self.args.keep:
            shutil.rmtree(d, ignore_errors=True)
        return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memcert", required=True)
    ap.add_argument("--seeds", type=int, default=20, help="search seeds 1..SEEDS (default 20)")
    ap.add_argument("--budget", type=int, default=50, help="claims search --budget (default 50)")
    ap.add_argument("--constructs", type=int, default=20, help="randomized shapes per construction (default 20)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--claims", default="", help="comma-separated claim ids (default: every claim with a search mode)")
    ap.add_argument("--work", default="", help="working directory (default: a temporary one, removed)")
    ap.add_argument("--keep", action="store_true", help="keep data and certificates in --work")
    ap.add_argument("--verbose", action="store_true", help="also print why each construct did not exit 0")
    ap.add_argument("--json-out", default="", help="write the figures and every disagreement as JSON")
    args = ap.parse_args()
    tmp = None
    if not args.work:
        tmp = tempfile.mkdtemp(prefix="memcert_agreement.")
        args.work = tmp
    c = Campaign(args)
    rc, out, err = run(c.bin + ["claims", "list", "--json"])
    if rc != 0:
        print("agreement: claims list failed: " + err.strip(), file=sys.stderr)
        return 2
    claims = [x["id"] for x in json.loads(out)["claims"] if x.get("search")]
    if args.claims:
        claims = [x for x in args.claims.split(",") if x]
    tasks = [(c.search, (cl, s)) for cl in claims for s in range(1, args.seeds + 1)]
    tasks += [(c.construct, (k, s)) for k in ("theorem1", "ks", "dana24") for s in range(1, args.constructs + 1)]
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futures = [ex.submit(f, *a) for f, a in tasks]
        for fu in concurrent.futures.as_completed(futures):
            r = fu.result()
            results.append(r)
            for why in r["disagreements"]:
                print("DISAGREEMENT: %s: %s" % (r["task"], why), flush=True)
            if args.verbose and r.get("note"):
                print("note: %s: %s" % (r["task"], r["note"]), flush=True)
    s = [r for r in results if r["task"].startswith("claims search")]
    k = [r for r in results if not r["task"].startswith("claims search")]
    total = lambda rs, key: sum(r.get(key, 0) for r in rs)
    figures = {
        "search": {"claims": len(claims), "seeds": args.seeds, "budget": args.budget, "runs": len(s),
                   "instances": total(s, "instances"), "certificates_verified": total(s, "verified"),
                   "undecided": total(s, "undecided"), "findings": total(s, "findings"),
                   "undecided_by_claim": {cl: total([r for r in s if r["claim"] == cl], "undecided") for cl in claims}},
        "construct": {"runs": len(k), "certificates_verified": total(k, "verified"), "negative": total(k, "negative"),
                      "undecided": total(k, "undecided"), "bad_input": total(k, "bad_input")},
        "disagreements": sum(len(r["disagreements"]) for r in results),
    }
    print("claims search: %(runs)d runs (%(claims)d claims x %(seeds)d seeds, budget %(budget)d): %(instances)d "
          "instances, %(certificates_verified)d certificates verified by `memcert verify`, %(undecided)d undecided, "
          "%(findings)d findings" % figures["search"])
    print("construct: %(runs)d runs: %(certificates_verified)d certificates verified, %(negative)d negative, "
          "%(undecided)d undecided, %(bad_input)d shapes refused as bad input" % figures["construct"])
    print("disagreements: %d" % figures["disagreements"])
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"figures": figures, "disagreements": [{"task": r["task"], "why": w} for r in results
                                                             for w in r["disagreements"]]}, f, indent=1)
    if tmp and not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if figures["disagreements"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
