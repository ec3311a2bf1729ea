import os

# One BLAS thread: float64 results that do not depend on the machine's core count. Measured:
# the matrix-free method of 002 on standmps (numpy64, eps = 1e-8) ends optimal with one
# OpenBLAS thread and with two on SkylakeX, Sandybridge and Prescott kernels, but in numerical
# trouble (8.7e-3) with two threads on Haswell kernels -- the CI machine's core count and CPU
# must not decide a test (README, the matrix-free table). Set before numpy is imported.
# The variables work only if numpy is not yet imported, and a pytest plugin may have imported it
# already (jaxtyping's does: on the lent GPU machine, 16 BLAS threads, scfxm2 failed a test that
# passes with one); threadpoolctl limits the BLAS already loaded too.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
try:
    from threadpoolctl import threadpool_limits
except ImportError:            # the test extra installs it; without it, the variables alone
    threadpool_limits = None
_BLAS_LIMITS = threadpool_limits(limits=1) if threadpool_limits is not None else None

import numpy as np
import pytest

from gpgpu.context import get_context


@pytest.fixture(scope="session")
def ctx():
    return get_context()


@pytest.fixture(autouse=True)
def gl_error_free(ctx):
    """Every test leaves the context without a pending GL error."""
    yield
    assert ctx.error == "GL_NO_ERROR"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def rel_err(x, ref):
    x = np.asarray(x, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    return np.linalg.norm(x - ref) / max(np.linalg.norm(ref), 1e-300)


LENGTHS = [1, 2, 3, 17, 100, 257]


class ReadBacks:
    """Counts the calls that read a Stream back to the CPU (read_texel, to_array, item)."""
    n = 0


@pytest.fixture
def readbacks(monkeypatch):
    """``readbacks.n``: the Stream read-backs since the test began (or since it set n = 0)."""
    from gpgpu import Stream

    counter = ReadBacks()
    for name in ("read_texel", "to_array", "item"):
        original = getattr(Stream, name)

        def counting(self, *a, _original=original, **k):
            counter.n += 1
            return _original(self, *a, **k)

        monkeypatch.setattr(Stream, name, counting)
    return counter
