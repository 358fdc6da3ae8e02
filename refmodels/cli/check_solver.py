"""``refmodels check-solver``: the conformance suite of :func:`refmodels.testing.check_solver`
for any executable. Each problem is written as a LIBSVM-format data file and a JSON file of
its parameters; the command runs (with a time limit) and writes the point to ``{out}``: an
``.npz`` or JSON file of named arrays (as ``refmodels certify`` reads), or a LIBSVM,
LIBLINEAR or LIBODM model file. The report is :class:`refmodels.testing.Report`'s, with a
progress bar (tqdm when installed). Exit status 0 when every certificate holds, 1 when one
fails, 2 on bad input."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

from ._common import CLIError

#: placeholders every command may use, besides the parameters by name ({lam}, {C}, ...)
PLACEHOLDERS = ("data", "params", "out", "dir")


def add_parser(sub):
    from refmodels.testing import SCALES, families

    p = sub.add_parser(
        "check-solver", help="run an executable solver over many problems and certify each",
        description="Run a solver (any executable) over problems of one family at every "
                    "scale, certify each point it writes, diagnose each failure, and print "
                    "the report (pass rate, holds_at distribution, worst cases with the "
                    "command that reproduces each). Exit 0 when every certificate holds, 1 "
                    "when one fails, 2 on bad input.",
        epilog="The command is a template: {data} (a LIBSVM-format file, labels +1/-1), "
               "{params} (a JSON file: the hyperparameters and the kernel, e.g. "
               '{"lam": 1.0, "mu": 0.5, "theta": 0.3, "kernel": "rbf", "gamma": 0.2}), '
               "{out} (where the command writes its point: .npz or .json with w or coef, "
               "intercept, dual variables; or a LIBSVM / LIBLINEAR / LIBODM model file), "
               "{dir} (the case's directory) and every parameter by name ({C}, {lam}, "
               "{gamma}, ...). Example: refmodels check-solver --family SVM --param "
               "fit_intercept=false --command 'train -s 3 -c {C} -B -1 -q {data} {out}'")
    p.add_argument("--family", required=True, metavar="NAME",
                   help=f"one of {', '.join(families())}")
    p.add_argument("--command", required=True, metavar="TEMPLATE",
                   help="the solver's command line, with {data} {params} {out} placeholders")
    p.add_argument("--n", type=int, default=50, help="number of problems (default 50)")
    p.add_argument("--scales", default="all",
                   help=f"comma-separated: all (default) or some of {', '.join(SCALES)}")
    p.add_argument("--kernels", default="linear",
                   help="comma-separated: linear (default), rbf, poly")
    p.add_argument("--seed", type=int, default=0, help="the suite's seed (default 0)")
    p.add_argument("--tol", type=float, default=1e-6,
                   help="tolerance on the scaled residuals (default 1e-6)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds each run of the command may take (default 60)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="pin a hyperparameter (repeatable), e.g. fit_intercept=true")
    p.add_argument("--out-name", default="out.npz", metavar="NAME",
                   help="file name of {out} in each case's directory (default out.npz; its "
                        "extension says .npz or .json; any other name is read as a model "
                        "file, its format from its header)")
    p.add_argument("--case", metavar="SEED:SCALE:KERNEL",
                   help="run one case only (as the report's reproduce lines give it)")
    p.add_argument("--keep", metavar="DIR",
                   help="keep every case's files in DIR (default: a temporary directory)")
    p.add_argument("--no-diagnose", action="store_true", help="skip the diagnoses")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_check_solver)
    return p


def _fixed(items):
    out = {}
    for item in items or []:
        if "=" not in item:
            raise CLIError(f"--param takes name=value; got {item!r}")
        k, v = (s.strip() for s in item.split("=", 1))
        low = v.lower()
        if low in ("true", "false", "yes", "no"):
            out[k] = low in ("true", "yes")
        else:
            try:
                out[k] = int(v) if v.lstrip("-").isdigit() else float(v)
            except ValueError:
                raise CLIError(f"--param {k}: {v!r} is not a number or a boolean") from None
    return out


def write_libsvm(path, X, y):
    """``X``, ``y`` as a LIBSVM-format file (1-based indices, every value written, %.17g)."""
    with open(path, "w") as fh:
        for xi, yi in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(xi))
            fh.write(f"{int(yi):+d} {feats}\n")


def _model_format(path):
    """``"libsvm"``, ``"liblinear"`` or ``"libodm"`` from a model file's first lines."""
    try:
        with open(path) as fh:
            head = [fh.readline().split()[:1] for _ in range(3)]
    except (OSError, UnicodeDecodeError):
        return None
    keys = {h[0] for h in head if h}
    if "svm_type" in keys:
        return "libsvm"
    if "solver_type" in keys:
        return "liblinear"
    if "instance" in keys or "feature" in keys:
        return "libodm"
    return None


def read_point(path, X, y):
    """The point the command wrote to ``path`` as :func:`refmodels.testing.as_solution`
    takes it: a dict of named arrays (npz/JSON), or a model file's point (with its
    ``source``; a LIBLINEAR / LIBODM bias feature becomes the intercept it stands for)."""
    from refmodels import formats

    from .io import _load_solution_file

    if not os.path.isfile(path):
        raise CLIError(f"the command wrote no {os.path.basename(path)}")
    low = path.lower()
    if low.endswith((".npz", ".json")):
        data = dict(_load_solution_file(path, None))
        nested = data.pop("dual", None)
        if isinstance(nested, dict):
            data.update(nested)             # {"dual": {"alpha": ...}} as certify reads it
        return data
    fmt = _model_format(path)
    if fmt is None:
        raise CLIError(f"{os.path.basename(path)} is neither .npz/.json nor a LIBSVM, "
                       "LIBLINEAR or LIBODM model file")
    info = formats.model_info(path, fmt)
    bias = info.get("bias")
    Xm = formats.augment(X, bias) if bias is not None else X
    d = formats.load_model(path, fmt, Xm, y)
    if bias is not None and "w" in d:
        w = np.asarray(d.pop("w"), float)
        d["w"], d["intercept"] = w[:-1], float(bias) * float(w[-1])
    return d


def cmd_check_solver(args):
    from refmodels import testing

    family = args.family
    match = [f for f in testing.families() if f.lower() == str(family).lower()]
    if not match:
        raise CLIError(f"--family must be one of {', '.join(testing.families())}; got {family!r}")
    family = match[0]
    template = args.command
    try:
        shlex.split(template)
    except ValueError as exc:
        raise CLIError(f"--command cannot be split into words: {exc}") from None
    if "{out}" not in template:
        raise CLIError("--command must write the point to {out}")
    if args.n < 1:
        raise CLIError(f"--n must be >= 1; got {args.n}")
    if not (args.timeout > 0):
        raise CLIError(f"--timeout must be > 0; got {args.timeout}")
    if not (args.tol > 0 and np.isfinite(args.tol)):
        raise CLIError(f"--tol must be a finite number > 0; got {args.tol}")
    fixed = _fixed(args.param)
    scales = [s.strip() for s in args.scales.split(",") if s.strip()]
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    try:
        plan = testing._plan(args.n, scales, kernels, args.seed)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.case:
        try:
            s, sc, k = args.case.split(":")
            plan = [(int(s), sc, k)]
            testing._plan(1, [sc], [k], 0)
        except ValueError as exc:
            raise CLIError(f"--case must be SEED:SCALE:KERNEL (e.g. 123:raw:linear): "
                           f"{exc}") from None
    if args.keep:
        root = args.keep
        os.makedirs(root, exist_ok=True)
        return _run_cases(family, args, template, fixed, plan, root)
    # without --keep the cases' files are scratch: removed however the run ends
    with tempfile.TemporaryDirectory(prefix="refmodels-check-") as root:
        return _run_cases(family, args, template, fixed, plan, root)


def _run_cases(family, args, template, fixed, plan, root):
    from refmodels import testing

    bar = _progress(len(plan), quiet=args.json)
    cases = []
    import time

    t0 = time.perf_counter()
    for i, (seed, scale, kernel) in enumerate(plan):
        X, y, params, prob = testing.suite_problem(family, seed, scale, kernel,
                                                   fixed=fixed or None)
        case = testing.Case(family, seed, scale, kernel, prob.m, X.shape[1], params)
        where = os.path.join(root, f"case{i:03d}")
        os.makedirs(where, exist_ok=True)
        data, ppath, out = (os.path.join(where, "data.svm"), os.path.join(where, "params.json"),
                            os.path.join(where, args.out_name))
        write_libsvm(data, X, y)
        with open(ppath, "w") as fh:
            json.dump(params, fh)
        if os.path.exists(out):
            os.remove(out)
        values = {**{k: (str(v).lower() if isinstance(v, bool) else v)
                     for k, v in params.items()},
                  "data": data, "params": ppath, "out": out, "dir": where}
        try:
            argv = [w.format_map(values) for w in shlex.split(template)]
        except (KeyError, IndexError, ValueError) as exc:
            raise CLIError(f"--command uses an unknown placeholder {exc} (known: "
                           f"{', '.join(PLACEHOLDERS)} and the parameters "
                           f"{', '.join(params)})") from None
        t1 = time.perf_counter()
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout,
                                  cwd=where)
        except subprocess.TimeoutExpired:
            case.error = f"the command ran out of its {args.timeout:g} s"
        except OSError as exc:
            raise CLIError(f"--command cannot run: {exc}") from None
        else:
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
                case.error = f"the command exited with status {proc.returncode}: {last}"
        case.solve_time = time.perf_counter() - t1
        if case.error is None:
            try:
                point = read_point(out, X, y)
            except (CLIError, ValueError) as exc:
                case.error = f"its output cannot be read: {exc}"
            else:
                testing.certify_case(case, prob, point, args.tol,
                                     diagnose=not args.no_diagnose)
        cases.append(case)
        bar(case)
    bar(None)
    report = testing.Report(family, cases, args.tol, fixed=fixed or None,
                            elapsed=time.perf_counter() - t0)
    report.reproduce = lambda c: _reproduce(c, args, template)
    rc = 0 if report.ok else 1
    args._verdict = rc
    if args.json:
        from ._common import _json_safe

        out = report.to_dict()
        out["exit_status"] = rc
        out["files"] = root if args.keep else None
        print(json.dumps(_json_safe(out), indent=1))
    else:
        print(report)
        if args.keep:
            print(f"  files: {root}")
    return rc


def _reproduce(case, args, template):
    extra = "".join(f" --param {p}" for p in (args.param or []))
    return (f"refmodels check-solver --family {case.family} --command {shlex.quote(template)}"
            f" --case {case.seed}:{case.scale}:{case.kernel} --tol {args.tol:g}{extra}"
            f" --keep case-{case.seed}")


def _progress(n, quiet=False):
    """``update(case)`` (None at the end): tqdm's bar when installed and stderr is a
    terminal, else one line a case on stderr."""
    if quiet:
        return lambda case: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if not getattr(sys.stderr, "isatty", lambda: False)():
        tqdm = None                       # a log or a pipe gets one plain line a case
    if tqdm is not None:
        bar = tqdm(total=n, file=sys.stderr, unit="problem", leave=False)
        state = {"fails": 0}

        def update(case):
            if case is None:
                bar.close()
                return
            state["fails"] += not case.ok
            bar.set_postfix(fails=state["fails"])
            bar.update(1)
        return update
    count = [0]

    def plain(case):
        if case is None:
            return
        count[0] += 1
        verdict = "holds" if case.ok else "FAILS"
        print(f"[{count[0]}/{n}] {case.line()} {verdict}", file=sys.stderr, flush=True)
    return plain
