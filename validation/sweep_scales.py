"""Random sweeps at every scale, both layers, every family.

For each family, draws random problems with unscaled features (a scale 10^U(-3, 3) on the
features, or raw data with a polynomial kernel so that Gram entries reach 1e8), RBF,
polynomial and linear kernels, near-duplicate points, theta close to 1, and
hyperparameters over many orders of magnitude. Each problem is solved

* by the fast solver (``fast.solve``): a point reported ``optimal`` must certify
  (``prob.certify(sol, reference=False).ok``);
* by the reference (``prob.solve()``): a point reported ``optimal`` must certify itself;
  a ``SolverError`` (the reference refusing) is allowed and counted.

A solve that does not claim ``optimal`` (status ``max_iter``, ``inaccurate``, or a
``SolverError``) is honest and is counted as a refusal, not as a failure. The script
prints one line per family and the list of silent wrong answers (the target is zero)::

    python validation/sweep_scales.py --n 150 --seed 0          # ~2,000 problems
    python validation/sweep_scales.py --family ODML --n 50 --seed 3 -v

Each problem runs in a worker process with a time limit (``--timeout``); a problem that
exceeds it is reported (the target is that none does).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "tests"))
from strategies import FAMILIES, make_problem  # noqa: E402  (one generator, shared)

def run_one(family, seed):
    import fast
    from refmodels.solution import SolverError

    p, desc = make_problem(family, seed)
    out = dict(desc)
    for layer in ("fast", "ref"):
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol = fast.solve(p, random_state=0) if layer == "fast" else p.solve()
        except SolverError as exc:
            out[layer] = {"status": "refused", "why": str(exc)[:200],
                          "time": time.perf_counter() - t0}
            continue
        except ValueError as exc:
            out[layer] = {"status": "valueerror", "why": str(exc)[:200],
                          "time": time.perf_counter() - t0}
            continue
        except Exception as exc:                       # a crash is a finding
            out[layer] = {"status": "crash", "why": f"{type(exc).__name__}: {exc}"[:300],
                          "tb": traceback.format_exc()[-800:],
                          "time": time.perf_counter() - t0}
            continue
        el = time.perf_counter() - t0
        rec = {"status": sol.status, "time": el}
        if sol.status == "optimal":
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = p.certify(sol, reference=False)
                rec["cert_ok"] = bool(c.ok)
                rec["worst"] = [c.worst[0], float(c.worst[1])]
            except Exception as exc:
                rec["cert_ok"] = False
                rec["worst"] = [f"certify raised {type(exc).__name__}: {exc}"[:200], np.nan]
        out[layer] = rec
    return out


def _worker(family, seeds, q):
    for s in seeds:
        try:
            q.put(run_one(family, s))
        except Exception as exc:
            q.put({"family": family, "seed": s, "error": f"{type(exc).__name__}: {exc}"})


def sweep(family, seeds, timeout):
    """Run the seeds in one worker; a problem over ``timeout`` s is recorded and skipped."""
    ctx = mp.get_context("fork")
    results, pending = [], list(seeds)
    while pending:
        q = ctx.Queue()
        proc = ctx.Process(target=_worker, args=(family, pending, q))
        proc.start()
        while pending:
            try:
                r = q.get(timeout=timeout)
            except Exception:
                results.append({"family": family, "seed": pending[0], "timeout": timeout})
                proc.kill()
                proc.join()
                pending = pending[1:]
                break
            results.append(r)
            pending = pending[1:]
        else:
            proc.join()
    return results


def silent_wrong(r):
    bad = []
    for layer in ("fast", "ref"):
        rec = r.get(layer)
        if rec and rec.get("status") == "optimal" and not rec.get("cert_ok", False):
            bad.append(layer)
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", action="append", choices=FAMILIES)
    ap.add_argument("--n", type=int, default=150, help="problems per family")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--out", default=None, help="write every record as JSON lines here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    fams = args.family or FAMILIES
    allrec, total_bad = [], []
    out = open(args.out, "w") if args.out else None     # one JSON line per problem, as it ends
    print(f"{'family':<8} {'n':>5} {'fast opt':>9} {'fast bad':>9} {'ref opt':>8} "
          f"{'ref bad':>8} {'refused':>8} {'crash':>6} {'timeout':>7} {'max fast[s]':>11}")
    for fam in fams:
        seeds = range(args.seed, args.seed + args.n)
        res = sweep(fam, seeds, args.timeout)
        allrec.extend(res)
        if out:
            for r in res:
                out.write(json.dumps(r, default=str) + "\n")
            out.flush()
        n = len(res)
        fo = sum(r.get("fast", {}).get("status") == "optimal" for r in res)
        ro = sum(r.get("ref", {}).get("status") == "optimal" for r in res)
        fb = [r for r in res if "fast" in silent_wrong(r)]
        rb = [r for r in res if "ref" in silent_wrong(r)]
        refused = sum(r.get(L, {}).get("status") in ("refused", "max_iter", "inaccurate")
                      for r in res for L in ("fast", "ref"))
        crash = [r for r in res if any(r.get(L, {}).get("status") == "crash"
                                       for L in ("fast", "ref")) or "error" in r]
        tmo = [r for r in res if "timeout" in r]
        tmax = max([r.get("fast", {}).get("time", 0.0) for r in res] or [0.0])
        print(f"{fam:<8} {n:5d} {fo:9d} {len(fb):9d} {ro:8d} {len(rb):8d} {refused:8d} "
              f"{len(crash):6d} {len(tmo):7d} {tmax:11.2f}", flush=True)
        total_bad.extend(fb + rb)
        if args.verbose:
            for r in fb + rb + crash + tmo:
                print("   ", json.dumps(r, default=str)[:600])
    if out:
        out.close()
    print(f"\n{len(allrec)} problems; silent wrong answers: {len(total_bad)} "
          "(a point reported 'optimal' that fails its certificate at 1e-6)")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
