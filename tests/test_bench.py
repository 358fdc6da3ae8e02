"""``python -m validation.bench``'s logic on synthetic timings (never a real timing): the
ratio is the median of the rounds, the noise their largest distance from it, a comparison
regresses beyond ``max(noise, baseline noise, floor)``, and the command exits 1 on a
deliberately slowed solver and 0 on the same solver unslowed."""
import json

import pytest

from validation import bench as B


class FakeClock:
    """A clock that moves only when a fake solver "runs"."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def solver(self, *seconds):
        """A solver whose successive calls take ``seconds`` (cycled)."""
        calls = []

        def run():
            self.now += seconds[len(calls) % len(seconds)]
            calls.append(1)
            return len(calls)
        return run


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(B, "clock", c)
    monkeypatch.setattr(B, "MIN_SAMPLE", 0.0)           # one call per side and round
    return c


def test_measure_median_and_noise(clock):
    ours = clock.solver(1.0, 1.0, 1.2, 1.0, 3.0)     # one round disturbed
    peer = clock.solver(2.0)
    res = B.measure(ours, peer, 5)
    assert res["ratios"] == pytest.approx([0.5, 0.5, 0.6, 0.5, 1.5])
    assert res["ratio"] == pytest.approx(0.5)          # the median ignores the outlier
    assert res["noise"] == pytest.approx(2.0)          # ... the noise does not
    assert res["t_ours"] == pytest.approx(1.0) and res["t_peer"] == pytest.approx(2.0)
    assert res["outs"] == [5, 5]


def test_measure_alternates_the_order(clock):
    order = []

    def side(name):
        def run():
            order.append(name)
            clock.now += 1.0
        return run
    B.measure(side("ours"), side("peer"), 4)
    assert order == ["ours", "peer", "peer", "ours", "ours", "peer", "peer", "ours"]


def test_measure_calls_a_fast_side_several_times(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(B, "clock", c)
    ours, peer = c.solver(0.01), c.solver(1.0)
    res = B.measure(ours, peer, 3, min_sample=0.25)
    assert res["number"] == [25, 1]                    # 25 calls make a quarter second
    assert res["t_ours"] == pytest.approx(0.01) and res["ratio"] == pytest.approx(0.01)
    assert res["outs"] == [1 + 3 * 25, 1 + 3]          # the calibration call, then rounds


@pytest.mark.parametrize("ratio, noise, verdict", [
    (0.50, 0.05, "same"), (0.66, 0.05, "same"),       # +32%: within the floor 35%
    (0.70, 0.05, "regressed"),                        # +40% > 35%
    (0.70, 0.50, "same"),                             # ... but within this run's noise
    (0.30, 0.05, "improved"), (0.40, 0.05, "same")])
def test_judge(ratio, noise, verdict):
    base = {"svm": {"ratio": 0.5, "noise": 0.1}}
    got, allow = B.judge({"svm": {"ratio": ratio, "noise": noise}}, base, floor=0.35)[
        "svm"]
    assert got == verdict
    assert allow == pytest.approx(max(noise, 0.35))


def test_judge_uses_the_baselines_noise_and_names_new_comparisons():
    base = {"svm": {"ratio": 1.0, "noise": 0.6}}
    out = B.judge({"svm": {"ratio": 1.5, "noise": 0.0}, "other": {"ratio": 9.0, "noise": 0}},
                  base, floor=0.1)
    assert out["svm"] == ("same", 0.6)
    assert out["other"] == ("new", None)


def test_judge_per_comparison_floor():
    base = {"a": {"ratio": 1.0, "noise": 0.0}, "b": {"ratio": 1.0, "noise": 0.0}}
    cur = {"a": {"ratio": 2.5, "noise": 0.0}, "b": {"ratio": 2.5, "noise": 0.0}}
    out = B.judge(cur, base, floor=0.35, floors={"a": 2.0})
    assert out["a"] == ("same", 2.0) and out["b"] == ("regressed", 0.35)


def _fake_comparisons(clock, ours_seconds):
    def setup(quick):
        return B.Sides(ours=clock.solver(*ours_seconds), peer=clock.solver(1.0),
                       warm_ours=lambda: None, warm_peer=lambda: None,
                       check=lambda a, b: "same answer", size="toy")

    def missing(quick):
        raise B.Skip("the peer is not installed")
    return [B.Comparison("toy", "peer", "a toy comparison", setup),
            B.Comparison("absent", "nobody", "a missing peer", missing)]


def test_command_passes_unslowed_and_fails_on_a_slowed_solver(clock, monkeypatch, tmp_path,
                                                             capsys):
    baseline = tmp_path / "baseline.json"
    monkeypatch.setattr(B, "COMPARISONS", _fake_comparisons(clock, (0.50, 0.52, 0.49)))
    args = ["--quick", "--no-record", "--baseline", str(baseline)]
    assert B.main(args + ["--update-baseline"]) == 0
    data = json.loads(baseline.read_text())
    assert data["quick"]["toy"]["ratio"] == pytest.approx(0.50)
    assert "absent" not in data["quick"]
    out = capsys.readouterr().out
    assert "absent: skipped: the peer is not installed" in out
    # the same solver again: within the noise and the floor
    monkeypatch.setattr(B, "COMPARISONS", _fake_comparisons(clock, (0.55, 0.48, 0.51)))
    assert B.main(args) == 0
    assert "0 regressed" in capsys.readouterr().out
    # the solver made 1.6x slower: beyond max(noise, floor 0.35)
    monkeypatch.setattr(B, "COMPARISONS", _fake_comparisons(clock, (0.80, 0.83, 0.78)))
    assert B.main(args) == 1
    out = capsys.readouterr().out
    assert "1 regressed: toy" in out and "regressed" in out
    # the full mode has no baseline yet: new, not a failure
    assert B.main(["--no-record", "--baseline", str(baseline)]) == 0
    assert " new " in capsys.readouterr().out


def test_slowed_wraps_a_solver(monkeypatch):
    slept = []
    ticks = iter([0.0, 2.0])
    monkeypatch.setattr(B.time, "perf_counter", lambda: next(ticks))
    monkeypatch.setattr(B.time, "sleep", slept.append)
    assert B.slowed(lambda: "x", 1.5)() == "x"
    assert slept == [pytest.approx(1.0)]


@pytest.mark.parametrize("bad", [["--slow", "linear_svm_liblinear"], ["--slow", "linear_svm_liblinear=0.5"],
                                 ["--slow", "nosuch=2"], ["--only", "nosuch"]])
def test_bad_arguments_name_the_option(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        B._parse(bad)
    assert exc.value.code == 2
    assert bad[0] in capsys.readouterr().err


def test_the_committed_baseline_covers_every_comparison_that_ran():
    data = B.load_baseline()
    assert set(data) >= {"quick"}
    for mode in ("quick", "full"):
        for name, entry in data.get(mode, {}).items():
            assert name in {c.name for c in B.COMPARISONS}
            assert entry["ratio"] > 0 and entry["noise"] >= 0
