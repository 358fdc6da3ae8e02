"""The command line: a few runs end to end in a subprocess, the rest in-process
(``refmodels.cli.main(argv)``). Malformed input: ``test_cli_malformed.py``."""
import json
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import refmodels as rm
from refmodels import cli
from refmodels.cli import main
from refmodels.solution import SolverError

CLI = [sys.executable, "-m", "refmodels.cli"]


def run(args, **kw):
    return subprocess.run(CLI + args, capture_output=True, text=True, timeout=600, **kw)


def run_main(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


@pytest.fixture()
def data_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, "pos", "neg")
    path = tmp_path / "data.csv"
    with open(path, "w") as fh:
        for xi, yi in zip(X, y):
            fh.write(",".join(f"{v:.17g}" for v in xi) + f",{yi}\n")
    return path, X, y


# --------------------------------------------------------------------------- end to end


def test_certify_json_solution_holds_and_fails(data_file, tmp_path):
    path, X, y = data_file
    prob = rm.SVM(X, y, C=0.5)
    ref = prob.solve()
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"w": ref.w.tolist()}))
    r = run(["certify", "--data", str(path), "--family", "svm", "--param", "C=0.5",
             "--solution", str(good), "--json"])
    assert r.returncode == 0, r.stderr + r.stdout
    out = json.loads(r.stdout)
    assert out["ok"] and out["residuals"]["objective gap"]["scaled"] < 1e-6
    bad = tmp_path / "bad.npz"
    np.savez(bad, w=ref.w * 0.9)
    r = run(["certify", "--data", str(path), "--family", "SVM", "--param", "C=0.5",
             "--solution", str(bad)])
    assert r.returncode == 1
    assert "FAILS" in r.stdout and "Traceback" not in r.stderr


def test_certify_svmlight_with_dual(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    y = np.where(X[:, 1] > 0, 1, -1)
    path = tmp_path / "data.svm"
    dump_svmlight_file(X, y, str(path))
    prob = rm.SVM(X, y, C=1.0, kernel=rm.kernels.RBF(gamma=0.5))
    ref = prob.solve()
    sol = tmp_path / "sol.npz"
    np.savez(sol, alpha=ref.variables["alpha"])
    r = run(["certify", "--data", str(path), "--family", "SVM", "--param", "C=1.0",
             "--kernel", "rbf", "--gamma", "0.5", "--solution", str(sol)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "HOLDS" in r.stdout


def test_closed_pipe_is_a_clean_exit(data_file, tmp_path):
    """``refmodels certify ... | head -1``: no "Broken pipe", no traceback, not exit 2."""
    path, X, y = data_file
    ref = rm.SVM(X, y).solve()
    sol = tmp_path / "s.json"
    sol.write_text(json.dumps({"coef": ref.coef.tolist()}))
    argv = CLI + ["certify", "--data", str(path), "--family", "SVM", "--solution", str(sol),
                  "--verbose"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                          # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=600)
    assert code in (0, 1), (code, err)
    assert "Broken pipe" not in err and "Traceback" not in err and "Exception" not in err, err
    # and through a shell, as a user types it
    cmd = " ".join(f"'{a}'" for a in argv) + " | head -1"
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True,
                       timeout=600)
    assert r.stdout.startswith("KKT certificate HOLDS"), r.stdout
    assert "Broken pipe" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (0, 141), r.returncode


# --------------------------------------------------------------------------- every family

def _write_csv(path, X, y):
    with open(path, "w") as fh:
        for xi, yi in zip(X, y):
            fh.write(",".join(f"{v:.17g}" for v in xi) + f",{yi}\n")


@pytest.fixture(scope="module")
def family_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("families")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > 0, 1, -1)
    Xm = rng.normal(size=(30, 3))
    ym = np.argmax(Xm + 0.3 * rng.normal(size=(30, 3)), axis=1)
    Xt = rng.normal(size=(4, 3))
    _write_csv(d / "bin.csv", X, y)
    _write_csv(d / "multi.csv", Xm, ym)
    np.savetxt(d / "test.csv", Xt, delimiter=",")
    return d, (X, y), (Xm, ym), Xt


K = rm.kernels
FAMILY_CASES = {
    "SVM": (lambda b, m, t: rm.SVM(*b, C=0.5, kernel=K.RBF(0.5)),
            ["--param", "C=0.5", "--kernel", "rbf", "--gamma", "0.5"], "bin", ["coef"]),
    "SVM+b": (lambda b, m, t: rm.SVM(*b, C=0.5, fit_intercept=True),
              ["--param", "C=0.5", "--param", "fit_intercept=1"], "bin", ["coef", "intercept"]),
    "ODML": (lambda b, m, t: rm.ODML(*b, lam=10, mu1=0.5, mu2=0.1),
             ["--param", "lam=10", "--param", "mu1=0.5", "--param", "mu2=0.1"], "bin", ["w"]),
    "LDM": (lambda b, m, t: rm.LDM(*b, C=1, lam1=0.25, lam2=0.1),
            ["--param", "C=1", "--param", "lam1=0.25", "--param", "lam2=0.1"], "bin", ["coef"]),
    "ODM": (lambda b, m, t: rm.ODM(*b, lam=1, mu=0.5, theta=0.3, kernel=K.Polynomial(2, 1.0, 1.0)),
            ["--param", "lam=1", "--param", "mu=0.5", "--param", "theta=0.3", "--kernel", "poly",
             "--degree", "2", "--gamma", "1"], "bin", ["coef"]),
    "SVMm": (lambda b, m, t: rm.SVMm(*b, C1=1, C2=0.5, eps=0.5),
             ["--param", "C1=1", "--param", "C2=0.5", "--param", "eps=0.5"], "bin",
             ["coef", "intercept"]),
    "EpsSVM": (lambda b, m, t: rm.EpsSVM(*b, C1=1, C2=0.5),
               ["--param", "C1=1", "--param", "C2=0.5"], "bin", ["coef", "intercept"]),
    "McODM": (lambda b, m, t: rm.McODM(*m, lam=1, mu=0.5, theta=0.3),
              ["--param", "lam=1", "--param", "mu=0.5", "--param", "theta=0.3"], "multi",
              ["coef"]),
    "McODM-W": (lambda b, m, t: rm.McODM(*m, lam=1, mu=0.5, theta=0.3),
                ["--param", "lam=1", "--param", "mu=0.5", "--param", "theta=0.3"], "multi",
                ["W"]),
    "MKLm": (lambda b, m, t: rm.MKLm(*b, kernels=[K.Linear(), K.RBF(0.5)], C1=1, C2=0.5,
                                     eps=0.5),
             ["--param", "C1=1", "--param", "C2=0.5", "--param", "eps=0.5", "--base-kernel",
              "linear", "--base-kernel", "rbf:gamma=0.5"], "bin", ["mu", "coef", "intercept"]),
    "EpsMKL": (lambda b, m, t: rm.EpsMKL(*b, kernels=[K.Linear(), K.Polynomial(2, 0.5, 1.0)],
                                         C1=1, C2=0.5),
               ["--param", "C1=1", "--param", "C2=0.5", "--base-kernel", "linear",
                "--base-kernel", "poly:degree=2,gamma=0.5,coef0=1"], "bin",
               ["mu", "coef", "intercept"]),
    "DRR": (lambda b, m, t: rm.DRR(*m, t, alpha=1, beta=1, q=2, r=1, rho="identity"),
            ["--param", "alpha=1", "--param", "beta=1", "--param", "q=2", "--param", "r=1",
             "--param", "rho=identity", "--test-data", "{d}/test.csv"], "multi", ["coef"]),
    "DRM": (lambda b, m, t: rm.DRM(*m, t, alpha=1, beta=1),
            ["--param", "alpha=1", "--param", "beta=1", "--test-data", "{d}/test.csv"], "multi",
            ["W"]),
}


def _solution_arrays(sol, keys):
    out = {}
    for k in keys:
        if k == "mu":
            out[k] = np.asarray(sol.variables["mu"])
        elif k == "W":
            out[k] = np.asarray(sol.variables["W"]) if "W" in sol.variables else sol.coef
        elif k == "w":
            out[k] = np.asarray(sol.variables["w"])
        else:
            out[k] = np.asarray(getattr(sol, k))
    return out


@pytest.mark.parametrize("case", sorted(FAMILY_CASES))
def test_every_family_good_holds_and_perturbed_fails(case, family_files, capsys):
    d, b, m, t = family_files
    make, opts, data, keys = FAMILY_CASES[case]
    prob = make(b, m, t)
    ref = prob.solve()
    arrays = _solution_arrays(ref, keys)
    good, bad = d / f"{case}_good.npz", d / f"{case}_bad.json"
    np.savez(good, **arrays)
    main_key = "coef" if "coef" in arrays else keys[0]
    perturbed = {k: (v * 0.9 if k == main_key else v).tolist() for k, v in arrays.items()}
    bad.write_text(json.dumps(perturbed))
    family = case.split("+")[0].split("-")[0]
    argv = ["certify", "--data", f"{d}/{data}.csv", "--family", family.lower(),
            *[o.replace("{d}", str(d)) for o in opts]]
    code, out, err = run_main(argv + ["--solution", good], capsys)
    assert code == 0, out + err
    assert out.startswith("KKT certificate HOLDS")
    code, out, err = run_main(argv + ["--solution", bad], capsys)
    assert code == 1, out + err
    assert out.startswith("KKT certificate FAILS") and "would hold at tol >=" in out


# --------------------------------------------------------------------------- certify options


@pytest.fixture()
def svm_files(data_file, tmp_path):
    path, X, y = data_file
    return path, X, y, tmp_path


def test_rbf_without_gamma_uses_scale_and_says_so(svm_files, capsys):
    path, X, y, tmp = svm_files
    gamma = 1.0 / (X.shape[1] * X.var())
    ref = rm.SVM(X, y, kernel=rm.kernels.RBF(gamma)).solve()
    sol = tmp / "s.npz"
    np.savez(sol, coef=ref.coef)
    code, out, err = run_main(["certify", "--data", path, "--family", "SVM", "--kernel", "rbf",
                               "--solution", sol], capsys)
    assert code == 0, out + err
    assert "gamma='scale'" in out and f"{gamma:.6g}" in out
    code, out, err = run_main(["certify", "--data", path, "--family", "SVM", "--kernel", "rbf",
                               "--gamma", "scale", "--solution", sol, "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert any("gamma='scale'" in n for n in doc["notes"])
    assert repr(float(gamma)) in doc["problem"]["kernel"]


@pytest.mark.parametrize("word", ["1", "true", "TRUE", "yes", "Yes"])
def test_boolean_parameters(word, svm_files, capsys):
    path, X, y, tmp = svm_files
    ref = rm.SVM(X, y, fit_intercept=True).solve()
    sol = tmp / "s.json"
    sol.write_text(json.dumps({"coef": ref.coef.tolist(), "b": ref.intercept}))
    code, out, err = run_main(["certify", "--data", path, "--family", "SVM", "--param",
                               f"fit_intercept={word}", "--solution", sol], capsys)
    assert code == 0, out + err
    assert "fit_intercept=True" in out


def test_intercept_without_the_flag_names_the_flag(svm_files, capsys):
    path, X, y, tmp = svm_files
    ref = rm.SVM(X, y, fit_intercept=True).solve()
    sol = tmp / "s.json"
    sol.write_text(json.dumps({"coef": ref.coef.tolist(), "intercept": ref.intercept}))
    code, _, err = run_main(["certify", "--data", path, "--family", "SVM", "--solution", sol],
                            capsys)
    assert code == 2 and "--param fit_intercept=true" in err
    code, _, err = run_main(["certify", "--data", path, "--family", "SVM", "--param",
                             "fit_intercept=no", "--solution", sol], capsys)
    assert code == 2 and "--param fit_intercept=true" in err


def test_wrong_parameter_name_lists_the_valid_ones(svm_files, capsys):
    path, X, y, tmp = svm_files
    sol = tmp / "s.json"
    sol.write_text(json.dumps({"coef": [0.0] * len(y)}))
    code, _, err = run_main(["certify", "--data", path, "--family", "ODM", "--param", "lambda=1",
                             "--solution", sol], capsys)
    assert code == 2 and "valid names: lam, mu, theta" in err


@pytest.fixture()
def good_svm(svm_files):
    path, X, y, tmp = svm_files
    ref = rm.SVM(X, y, C=0.5).solve()
    sol = tmp / "good.json"
    sol.write_text(json.dumps({"coef": ref.coef.tolist()}))
    return ["certify", "--data", str(path), "--family", "SVM", "--param", "C=0.5", "--solution",
            str(sol)]


def _gap_row(out):
    return re.search(r"^\s+objective gap\s+-?\d", out, re.M) is not None


def test_reference_auto_follows_the_python_rule(good_svm, capsys, monkeypatch):
    code, out, _ = run_main(good_svm, capsys)
    assert code == 0 and _gap_row(out)
    import refmodels.base

    monkeypatch.setattr(refmodels.base, "AUTO_REFERENCE_MAX_M", 10)
    code, out, _ = run_main(good_svm, capsys)
    assert code == 0 and not _gap_row(out) and "m=40 > 10" in out
    code, out, _ = run_main(good_svm + ["--reference"], capsys)
    assert code == 0 and _gap_row(out)
    monkeypatch.undo()
    code, out, _ = run_main(good_svm + ["--no-reference"], capsys)
    assert code == 0 and not _gap_row(out) and "--no-reference" in out


@pytest.mark.parametrize("exc", [SolverError("reference solver CLARABEL returned status "
                                             "'infeasible_inaccurate'"),
                                 np.linalg.LinAlgError("Matrix is not positive definite")])
def test_reference_unavailable_is_reported_not_a_failure(exc, good_svm, capsys, monkeypatch):
    def boom(self):
        raise exc

    monkeypatch.setattr(rm.SVM, "reference_solution", boom)
    code, out, err = run_main(good_svm, capsys)
    assert code == 0, out + err
    assert "reference unavailable" in out and not _gap_row(out)
    code, out, err = run_main(good_svm + ["--json"], capsys)
    assert code == 0 and "unavailable" in json.loads(out)["reference"]


def test_json_output_and_bracketed_flag_from_the_readme(good_svm, capsys):
    code, out, _ = run_main(good_svm + ["[--json]"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["ok"] is True and doc["exit_status"] == 0 and doc["problem"]["family"] == "SVM"
    assert doc["problem"]["m"] == 40


def test_tolerance_option(good_svm, capsys):
    code, out, _ = run_main(good_svm + ["--tol", "1e-3"], capsys)
    assert code == 0 and "tol=0.001" in out


def test_drr_summary_is_compact_and_verbose_prints_arrays(family_files, capsys):
    d, _, (Xm, ym), Xt = family_files
    Xt = np.vstack([Xt] * 15)                                   # 60 test points
    np.savetxt(d / "test60.csv", np.column_stack([Xt, np.zeros(len(Xt))]), delimiter=",")
    prob = rm.DRM(Xm, ym, Xt, alpha=1, beta=1)
    np.savez(d / "drm60.npz", coef=prob.solve(form="closed_form").coef)
    argv = ["certify", "--data", d / "multi.csv", "--family", "DRM", "--param", "alpha=1",
            "--param", "beta=1", "--test-data", d / "test60.csv", "--solution", d / "drm60.npz"]
    code, out, err = run_main(argv, capsys)
    assert code == 0, out + err
    assert len(out.splitlines()) < 25 and max(len(ln) for ln in out.splitlines()) < 200
    assert "60 test points" in out and "--verbose for all" in out
    code, out_v, _ = run_main(argv + ["--verbose"], capsys)
    assert code == 0 and len(out_v) > 2 * len(out)


def test_help_is_plain_text(capsys):
    for argv in (["--help"], ["certify", "--help"], ["verify", "--help"]):
        code, out, _ = run_main(argv, capsys)
        assert code == 0
        assert "``" not in out and ":math:" not in out
    code, out, _ = run_main(["certify", "--help"], capsys)
    for fam in cli.FAMILIES:
        assert fam in out
    code, out, _ = run_main(["verify", "--help"], capsys)
    assert "McODM" in out and "DRR" in out


def test_solution_format_goes_through_the_reader(good_svm, monkeypatch, capsys):
    calls = {}
    coef = json.loads(open(good_svm[-1]).read())["coef"]

    def load_model(path, fmt, X, y):
        calls["args"] = (path, fmt, X.shape, len(y))
        return {"coef": np.asarray(coef)}

    fake = types.ModuleType("refmodels.formats")
    fake.load_model = load_model
    monkeypatch.setitem(sys.modules, "refmodels.formats", fake)
    monkeypatch.setattr(rm, "formats", fake, raising=False)
    code, out, err = run_main(good_svm + ["--solution-format", "libsvm"], capsys)
    assert code == 0, out + err
    assert calls["args"][1] == "libsvm" and calls["args"][2] == (40, 3)


def test_liblinear_model_file(svm_files, capsys):
    pytest.importorskip("refmodels.formats")
    _, X, y, tmp = svm_files
    y = np.where(y == "pos", 1, -1)
    path = tmp / "numeric.csv"
    _write_csv(path, X, y)
    ref = rm.SVM(X, y, C=0.5).solve()
    model = tmp / "model.liblinear"
    # labels in the file's order: the first label is the positive side of w^T x
    model.write_text("solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\n"
                     "nr_feature 3\nbias -1\nw\n" + "".join(f"{v:.17g}\n" for v in ref.w))
    argv = ["certify", "--data", path, "--family", "SVM", "--param", "C=0.5", "--solution",
            model, "--solution-format", "liblinear"]
    code, out, err = run_main(argv, capsys)
    assert code == 0, out + err
    model.write_text(model.read_text().replace("nr_feature 3", "nr_feature 2"))
    code, out, err = run_main(argv, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err


def test_derive_subcommand_is_wired_when_present(monkeypatch, capsys):
    fake = types.ModuleType("refmodels.derive")

    def add_parser(sub):
        p = sub.add_parser("derive", help="derive things")
        p.add_argument("family")
        return p

    def run(args):
        print(f"derived {args.family}")
        return 0

    fake.add_parser, fake.run = add_parser, run
    monkeypatch.setitem(sys.modules, "refmodels.derive", fake)
    monkeypatch.setattr(rm, "derive", fake, raising=False)
    code, out, _ = run_main(["derive", "ODM"], capsys)
    assert code == 0 and "derived ODM" in out


# --------------------------------------------------------------------------- verify


def test_verify_subset_prints_rows_legend_and_real_names(capsys):
    code, out, err = run_main(["verify", "--family", "svm", "--family", "DRR", "--no-fast"],
                              capsys)
    assert code == 0, out + err
    rows = [ln for ln in out.splitlines() if ln.rstrip().endswith("OK")]
    assert len(rows) == 6                        # SVM (with and without b) x 2 kernels, DRR x 2
    assert sum(ln.startswith("SVM ") and "fit_intercept=True" in ln for ln in rows) == 2
    assert sum(ln.startswith("DRR ") and "q=2, r=1" in ln for ln in rows) == 2
    assert "SVM+b" not in out and "DRR21" not in out
    for word in ("P*", "D*", "gap", "worst KKT", "sums over the test", "Hyperparameters",
                 "C=1", "alpha=1, beta=1, q=2, r=1, rho=identity"):
        assert word in out, word
    assert "6 of 6 rows certified" in out


def test_verify_family_names_are_exactly_the_certify_names():
    names = {c["family"] for c in cli._cases()}
    assert names == set(cli._verify_families())
    assert names <= set(cli.FAMILIES)


def test_verify_compile_progress(capsys, monkeypatch):
    p = cli._Progress(2, sys.stderr)
    p.start({"family": "SVM", "kernel": "rbf"})
    p.done({"family": "SVM", "kernel": "rbf"}, 12.5)
    err = capsys.readouterr().err
    assert "[1/2] SVM rbf: compiling" in err and "12.5 s" in err
    assert cli._fast_cache_cold() in (True, False, None)


def test_verify_json(capsys):
    code, out, _ = run_main(["verify", "--family", "drm", "--no-fast", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [r["family"] for r in rows] == ["DRM", "DRM"]
    assert all(r["verdict"] == "OK" and r["params"]["beta"] == 1 for r in rows)


def test_drr_test_data_in_libsvm_format_and_with_a_header(family_files, capsys):
    from sklearn.datasets import dump_svmlight_file

    d, _, (Xm, ym), Xt = family_files
    dump_svmlight_file(Xm, ym, str(d / "m.svm"))
    dump_svmlight_file(Xt, np.zeros(len(Xt)), str(d / "t.svm"))
    with open(d / "t_hdr.csv", "w") as fh:
        fh.write("a,b,c,label\n")
        for row in Xt:
            fh.write(",".join(f"{v:.17g}" for v in row) + ",unknown\n")
    prob = rm.DRM(Xm, ym, Xt, alpha=1, beta=2, kernel=rm.kernels.RBF(0.3))
    np.savez(d / "drm.npz", coef=prob.solve().coef)
    for test in ("t.svm", "t_hdr.csv"):
        code, out, err = run_main(["certify", "--data", d / "m.svm", "--family", "drm", "--param",
                                   "alpha=1", "--param", "beta=2", "--kernel", "rbf", "--gamma",
                                   "0.3", "--test-data", d / test, "--solution", d / "drm.npz"],
                                  capsys)
        assert code == 0, out + err


def test_verify_rows_build_the_problems_their_legend_states():
    for case in cli._cases():
        prob = case["make"]()
        assert type(prob).__name__ == case["family"]
        for k, v in case["params"].items():
            if hasattr(prob, k) and isinstance(v, (int, float, bool)):
                assert getattr(prob, k) == v, (case["family"], k)
