"""The page's two voices (issue 61): every pass of every algorithm of --list, at n = 8, has a
plain sentence naming its step before the papers' bookkeeping; every algorithm has the summary
of its recurrence; the first ping-pong copy says why it is there; one pass is marked as holding
the answer (Cholesky's L, before the pivot check). The sentences come from gpgpu.show.story."""
import re

import pytest

from gpgpu.show import ALGORITHMS, run
from gpgpu.show.story import SUMMARIES, plain_words

N = 8
_HEAD = re.compile(r"^(Step k = (\d+) of (\d+)|Before step k = (0) of (\d+)|After the last step \(k = (\d+) of (\d+)\)): ")


def test_every_algorithm_has_its_summary():
    assert set(SUMMARIES) == set(ALGORITHMS)
    assert all(len(s) > 80 for s in SUMMARIES.values())


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_pass_has_a_plain_sentence_naming_its_step(name):
    """One sentence a pass, starting with its step k of S (k < S), the steps counted in order,
    with words of the algorithm (not the kernel's name alone); exactly one pass holds the answer;
    the first copy of a ping-pong pair explains the ping-pong."""
    frames = run(name, N).frames
    words = plain_words(frames, name)
    assert len(words) == len(frames)
    last = -1
    for f, w in zip(frames, words):
        m = _HEAD.match(w["plain"])
        assert m, (name, f.index, w["plain"])
        numbers = [int(v) for v in m.groups()[1:] if v is not None]
        k, steps = numbers
        assert 0 <= k < steps, (name, f.index, w["plain"])
        assert k >= last or w["plain"].startswith("After"), (name, f.index)
        last = k if w["plain"].startswith("Step") else last
        assert not w["plain"][m.end():].startswith("runs "), (name, f.index, w["plain"])
    assert sum(w["answer"] for w in words) == 1
    answer = next(w for w in words if w["answer"])
    assert "holds the answer" in answer["plain"]
    copies = [w["plain"] for f, w in zip(frames, words) if f.kernel == "copy" and "ping-pong" in w["plain"]]
    if copies:
        assert "a pass cannot read the texture it writes" in copies[0]
        assert all("a pass cannot read" not in c for c in copies[1:])


def test_cholesky_says_its_steps_in_the_algorithms_words():
    """Cholesky, n = 8: step k = 1's normalization divides column 1 by the pivot, the last square
    root holds L (marked), and the pivot check after it is said to be a check."""
    frames = run("cholesky", N).frames
    words = plain_words(frames, "cholesky")
    norm = [w["plain"] for f, w in zip(frames, words) if f.kernel == "normalization"][1]
    assert norm == ("Step k = 1 of 8: divides column k below the diagonal by the pivot: L(i, k) = a_ik / L(k, k), "
                    "i > k (it writes column 1, rows 2-7).")
    last_root = max(f.index for f in frames if f.kernel == "square_root")
    assert words[last_root]["answer"]
    assert words[last_root + 1]["plain"].startswith("After the last step (k = 7 of 8): the check")
