"""The live page's data checked against the Python run that recorded it, without a browser (where
Chromium is present, tests/test_show_live.py replays the same data in it): every uniform is
handed over with the type its program declares, and every host decision the page mirrors is
placed after the pass the host reads back, with Python's own words and the recorded outcome."""
import numpy as np
import pytest

from gpgpu.errors import NotPositiveDefiniteError, SingularMatrixError
from gpgpu.show import ALGORITHMS, run
from gpgpu.show.live import decisions, live_data, uniform_types

N = 4
INTEGER = ("int", "bool", "ivec2", "ivec3", "ivec4")


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_uniform_has_its_declared_type(name):
    """A uniform declared int set with gl.uniform1f is an error in WebGL2 (the pass then draws with
    the program's previous value): each recorded uniform carries the type its program declares
    (planted: every type "float"), integral values where the type is an integer one."""
    rec = run(name, N)
    data = live_data(rec.frames, rec.problem)
    checked = 0
    for p in data["passes"]:
        if p["program"] is None:
            continue
        program = data["programs"][p["program"]]
        declared = uniform_types(program["fs"], program["vs"])
        assert declared == program["types"]
        for uname, kind, values in p["uniforms"]:
            if uname in declared:
                assert kind == declared[uname], (name, program["file"], uname)
                checked += 1
            if kind in INTEGER:
                assert all(v == int(v) for v in values), (name, uname, values)
    assert checked > 0


def test_the_pivot_check_is_read_after_the_last_flag_reduction():
    """Cholesky's pivot check (first_bad_pivot): one decision, after the last min reduction of the
    pivot flags, whose recorded texel (0, 0) says no pivot failed (above 1e38), with the words of
    NotPositiveDefiniteError for each step (planted: the decision after another pass)."""
    rec = run("cholesky", N)
    flags = [d for d in decisions(rec.frames, rec.problem) if d["kind"] == "pivot_flags"]
    assert len(flags) == 1
    d = flags[0]
    inside = [f.index for f in rec.frames if any(c.endswith(".first_bad_pivot") for c in f.context)]
    assert d["after"] == max(inside) and rec.frames[d["after"]].kernel == "min_reduction"
    assert d["texture"] == rec.frames[d["after"]].target_serial
    assert float(rec.frames[d["after"]].values.reshape(-1)[0]) > 1e38
    assert d["messages"] == [str(NotPositiveDefiniteError(k, N)) for k in range(N)]


@pytest.mark.parametrize("name", ["lu-partial", "lu-full", "gauss-jordan"])
def test_each_pivot_decision_holds_the_recorded_pivot(name):
    """LU-GPU's pivot search (paper 004): one decision a step after the argmax's last pass, whose
    recorded (row, col) is the pivot numpy finds in the recorded matrix of that step (the largest
    |entry| of column k below the diagonal, or of the trailing block for full pivoting), with
    SingularMatrixError's words."""
    if name not in ALGORITHMS:
        pytest.skip(f"{name} is not among the shown algorithms")
    rec = run(name, N)
    pivots = [d for d in decisions(rec.frames, rec.problem) if d["kind"] == "pivot"]
    assert [d["step"] for d in pivots] == list(range(len(pivots))) and len(pivots) >= N - 1
    for d in pivots:
        k = d["step"]
        search = rec.frames[d["after"]]
        assert any(c.endswith(".argmax_region") for c in search.context)
        first = d["after"]
        while any(c.endswith(".argmax_region") for c in rec.frames[first - 1].context):
            first -= 1
        S = rec.frames[first].inputs["S"].astype(np.float64)                # the matrix of step k, [row, col]
        S = S[..., 0] if S.ndim == 3 else S
        if d["pivoting"] == "full":
            block = np.abs(S[k:d["order"], k:d["order"]])
            p, q = np.unravel_index(np.argmax(block), block.shape)
            want = [k + int(p), k + int(q)]
        else:
            want = [k + int(np.argmax(np.abs(S[k:d["order"], k]))), k]
        assert d["recorded"][0] == want[0] and (d["pivoting"] != "full" or d["recorded"][1] == want[1]), (k, d, want)
        assert d["messages"]["zero"].startswith(str(SingularMatrixError(k, d["order"], d["pivoting"], 0.0, 1.0,
                                                                        None))[:40])
