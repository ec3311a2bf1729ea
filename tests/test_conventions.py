"""One dtype rule for what the public functions answer: numpy in, float64 numpy out (the GPU
computes in float32, so the values are float32 values, scaled back by exact powers of two);
Streams in, Streams out. cholesky answered float32 where lu answered float64."""
from types import SimpleNamespace

import numpy as np
import pytest

import gpgpu
from gpgpu import Stream

N = 6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(6)
    B = rng.standard_normal((N, N))
    return SimpleNamespace(
        S=B @ B.T + N * np.eye(N),                         # symmetric positive definite
        M=rng.standard_normal((N, N)) + N * np.eye(N),     # general, well conditioned
        b=rng.standard_normal(N), B=rng.standard_normal((N, 2)),
        W=rng.standard_normal((3, N)), d=rng.uniform(0.5, 2.0, N))


def _lu_factor_solve(D):
    with gpgpu.lu_factor(D.M) as f:
        return gpgpu.lu_solve(f, D.b)


# (name, call, whether the answer holds float32 values): every function of gpgpu/__init__.py
# that answers numpy for numpy input, each branch that builds its answer separately
RULE = [
    ("cholesky", lambda D: gpgpu.cholesky(D.S), True),
    ("cholesky packed", lambda D: gpgpu.cholesky(D.S, storage="packed"), True),
    ("cholesky inner", lambda D: gpgpu.cholesky(D.S, form="inner"), True),
    ("cholesky blocked", lambda D: gpgpu.cholesky(D.S, variant="blocked", block=4), True),
    ("cho_solve", lambda D: gpgpu.cho_solve(np.linalg.cholesky(D.S), D.b), True),
    ("cho_solve (n, r)", lambda D: gpgpu.cho_solve(np.linalg.cholesky(D.S), D.B), True),
    ("lu", lambda D: gpgpu.lu(D.M), True),
    ("lu full", lambda D: gpgpu.lu(D.M, pivoting="full"), True),
    ("lu blocked", lambda D: gpgpu.lu(D.M, variant="blocked", block=4), True),
    ("lu_solve", lambda D: gpgpu.lu_solve(D.M, D.b), True),
    ("lu_solve (n, r)", lambda D: gpgpu.lu_solve(D.M, D.B), True),
    ("lu_factor + lu_solve", _lu_factor_solve, True),
    ("gauss_jordan", lambda D: gpgpu.gauss_jordan(D.M, D.b), True),
    ("gauss_jordan (n, r)", lambda D: gpgpu.gauss_jordan(D.M, D.B), True),
    ("cg", lambda D: gpgpu.cg(D.S, D.b, rtol=1e-6)[0], True),
    ("lstsq_weighted", lambda D: gpgpu.lstsq_weighted(D.W, D.d, D.b, refine=False).x, True),
    # refined in float64 on the CPU (paper 001's Algorithm 1): float64 values
    ("lstsq_weighted refined", lambda D: gpgpu.lstsq_weighted(D.W, D.d, D.b).x, False),
]

# the same rule for the level 1 and 2 kernels, the reductions and adat
OUTSIDE = [
    ("adat", lambda D: gpgpu.adat(D.W, D.d), True),
    ("gemv", lambda D: gpgpu.gemv(D.M, D.b), True),
    ("trsv", lambda D: gpgpu.trsv(np.tril(D.M), D.b), True),
    ("copy", lambda D: gpgpu.copy(D.b), True),
    ("saxpy", lambda D: gpgpu.saxpy(2.0, D.b, D.b), True),
    ("scale", lambda D: gpgpu.scale(2.0, D.b), True),
    ("add_scalar", lambda D: gpgpu.add_scalar(D.b, 1.0), True),
    ("multiply", lambda D: gpgpu.multiply(D.b, D.b), True),
    ("divide", lambda D: gpgpu.divide(D.b, D.d), True),
    ("reduce axis", lambda D: gpgpu.reduce(D.M, axis=0), True),
]

CASES = [pytest.param(f, v, id=name) for name, f, v in RULE] + \
        [pytest.param(f, v, id=name) for name, f, v in OUTSIDE]


@pytest.mark.parametrize("call, float32_values", CASES)
def test_numpy_in_float64_out(data, call, float32_values):
    out = call(data)
    arrays = out if isinstance(out, tuple) else (out,)
    for a in arrays:
        assert isinstance(a, np.ndarray) and a.dtype == np.float64, (type(a), getattr(a, "dtype", None))
        if float32_values:      # the GPU's float32 results, widened (and scaled by powers of two)
            np.testing.assert_array_equal(a, a.astype(np.float32))


def test_scalars_are_python_floats(data):
    """The reductions to one number answer a Python float (float64), for numpy input too."""
    for v in (gpgpu.dot(data.b, data.b), gpgpu.norm_inf(data.b), gpgpu.reduce(data.b)):
        assert type(v) is float


STREAMS = [
    ("cholesky", lambda D, up: gpgpu.cholesky(up(D.S))),
    ("cho_solve", lambda D, up: gpgpu.cho_solve(up(np.linalg.cholesky(D.S)), up(D.b))),
    ("lu_solve", lambda D, up: gpgpu.lu_solve(D.M, up(D.b))),
    ("gauss_jordan", lambda D, up: gpgpu.gauss_jordan(up(D.M), up(D.B))),
    ("cg", lambda D, up: gpgpu.cg(D.S, up(D.b), rtol=1e-6)[0]),
    ("adat", lambda D, up: gpgpu.adat(up(D.W), up(D.d))),
    ("gemv", lambda D, up: gpgpu.gemv(up(D.M), up(D.b))),
]


@pytest.mark.parametrize("call", [pytest.param(f, id=name) for name, f in STREAMS])
def test_streams_in_streams_out(data, call):
    inputs = []

    def up(a):
        inputs.append(Stream.from_array(a))
        return inputs[-1]

    try:
        out = call(data, up)
        assert isinstance(out, Stream)
        out.release()
    finally:
        for s in inputs:
            s.release()
