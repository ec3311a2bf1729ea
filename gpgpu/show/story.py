"""The page's plain words (beyond the papers, a teaching tool): for each algorithm of
``python -m gpgpu.show --list`` the recurrence its passes implement (:data:`SUMMARIES`), and for
each recorded pass a sentence of what it does in the algorithm -- step k of the algorithm's
steps, the cells it writes, why -- before the papers' bookkeeping that the caption carries
(:func:`plain_words`). The sentences are made here, in one place, from each pass's recorded
kernel, the step it belongs to (counted from the passes that open a step: a Cholesky step opens
with the pivot's square root, an LU step with its pivot search, ...) and the cells it shaded.
The first ping-pong copy says why it is there, and the pass that holds the answer says so.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SUMMARIES", "family", "plain_words"]

_CHOLESKY = ("A = L L^T, column by column. Step k (k = 0 .. m-1, as Python's errors count): the pivot "
             "L(k, k) = sqrt(a_kk); the column below it L(i, k) = a_ik / L(k, k) for i > k; then {update}. "
             "After the last step the lower triangle holds L; one check reads back whether every pivot was "
             "positive.")
_OUTER = "the trailing matrix loses the outer product of that column: a_ij -= L(i, k) L(j, k) for i >= j > k"
_LU = ("P A{q} = L U by Gaussian elimination with {what} pivoting (LU-GPU, 004). Before the steps max|A| gives the "
       "threshold n u max|A| (u = 2^-24) below which a pivot counts as zero. Step k: the pivot search (the largest "
       "|a_ij| of {where}), read back; the swap of {swap} k and the pivot's; the multipliers L(i, k) = a_ik / u_kk "
       "below the pivot; then the trailing block loses their products with the pivot row: a_ij -= L(i, k) u_kj for "
       "i, j > k. The texture ends holding L (below the diagonal, unit diagonal implied) and U (on and above it).")

#: algorithm -> the recurrence its passes implement, as the top of its page says it
SUMMARIES = {
    "cholesky": _CHOLESKY.format(update=_OUTER + ", over a triangle (001, Fig. 5)"),
    "cholesky-square": _CHOLESKY.format(update=_OUTER + ", drawn over the whole trailing square as BrookGPU does "
                                        "(the upper half is computed and never read)"),
    "cholesky-columns": _CHOLESKY.format(update=_OUTER + ", one pass per trailing column j"),
    "cholesky-computed": _CHOLESKY.format(update=_OUTER + "; the kernel computes the pivot's index itself"),
    "cholesky-triad": _CHOLESKY.format(update=_OUTER + "; the indices stream in as triads"),
    "cholesky-inner": ("A = L L^T, left-looking (000, Algorithm 1). Step k: column k first loses the inner "
                       "products of the earlier columns, a_ik -= sum_{j<k} L(i, j) L(k, j) for i >= k; then "
                       "L(k, k) = sqrt(a_kk) and L(i, k) = a_ik / L(k, k) below it. One check reads back whether "
                       "every pivot was positive."),
    "cholesky-packed-even": _CHOLESKY.format(update=_OUTER + "; the triangle lives in the rectangular packed "
                                             "format (001, Fig. 6), so the update's triangle is drawn in pieces"),
    "cholesky-packed-odd": _CHOLESKY.format(update=_OUTER + "; the triangle lives in the rectangular packed "
                                            "format (001, Fig. 7), so the update's triangle is drawn in pieces"),
    "cholesky-blocked": ("A = L L^T by panels of 4 columns: inside a panel each step k takes L(k, k) = sqrt(a_kk), "
                         "L(i, k) = a_ik / L(k, k) and updates the panel's remaining columns; after the panel one "
                         "rank-4 pass subtracts L_panel L_panel^T from the trailing matrix (kept in RGBA 2 x 2 "
                         "blocks). One check reads back whether every pivot was positive."),
    "lu-partial": _LU.format(q="", what="partial", where="column k on and below the diagonal", swap="rows"),
    "lu-full": _LU.format(q=" Q", what="full", where="the trailing block", swap="rows and columns"),
    "lu-blocked": ("P A = L U by panels of 4 columns with partial pivoting: inside a panel each step k searches "
                   "the pivot, swaps rows, forms L(i, k) = a_ik / u_kk and updates the panel; the panel's row "
                   "swaps are then applied to the whole matrix by a permutation, and one rank-4 pass updates the "
                   "trailing block (RGBA 2 x 2 blocks)."),
    "gauss-jordan": ("[A | B] -> [I | A^-1 B] by Gauss-Jordan elimination with partial pivoting (004). Step k: "
                     "the pivot search in column k, read back; the swap of rows k and the pivot's; row k divided "
                     "by the pivot; then every other row, above and below, loses a_ik times row k, clearing "
                     "column k. At the end the right-hand columns hold X = A^-1 B."),
    "adat": ("C = A D^2 A^T = sum_j d_j^2 a_j a_j^T, one column j of A at a time (001, Algorithm 3). Step j: "
             "b = A(:, j) d_j^2 (column scaling); C(i, l) += A(i, j) b(l) over the lower triangle (outer-product "
             "addition). A last reduction reads max|C| back to refuse an overflow."),
    "adat-packed": ("C = A D^2 A^T = sum_j d_j^2 a_j a_j^T into the rectangular packed format (001, Fig. 4). "
                    "Step j: b = A(:, j) d_j^2; C += A(:, j) b^T over the packed lower triangle. A last reduction "
                    "reads max|C| back."),
    "reduce-pingpong": ("s = sum_ij a_ij by halving: each step adds pairs of cells, so the grid halves, width "
                        "then height, until one texel holds the sum (000, level 1 kernels)."),
    "reduce-pyramid": ("s = sum_ij a_ij by 003's pyramid: the input padded to a power of two, then each step adds "
                       "pairs, halving the grid, until one texel holds the sum."),
    "sparse-product": ("y = A x for a sparse A in ELLPACK (002, FSAX (9)): y_i = sum_k val(i, k) x(col(i, k)) "
                       "over the K stored entries of row i, one fragment a row, in one pass."),
    "cg-iteration": ("One conjugate-gradient iteration (003, after Shewchuk B2): delta = r^T r; q = A d; "
                     "alpha = delta / d^T q; x += alpha d; r -= alpha q; delta_new = r^T r; beta = delta_new / "
                     "delta; d = r + beta d. Dot products are a product pass and halving sums; the scalars stay "
                     "on the GPU."),
}

#: what opens a step, by family: the kernels (None: every pass but the halving sums)
_OPENERS = {"cholesky": ("square_root",), "lu": ("argmax_reduction_first",), "adat": ("column_scaling",),
            "reduce": ("sum_reduction",), "sparse": ("sparse_ellpack",),
            "cg": ("pyramid_product", "matrix_vector_inner_product", "cg_breakdown_flag", "scalar_quotient",
                   "saxpy_gpu_scalar", "cg_converged", "saxpy")}


def family(algorithm: str) -> str:
    """The family of an algorithm of --list: cholesky, lu (LU and Gauss-Jordan), adat, reduce,
    sparse or cg."""
    for prefix, fam in (("cholesky", "cholesky"), ("lu", "lu"), ("gauss", "lu"), ("adat", "adat"),
                        ("reduce", "reduce"), ("sparse", "sparse"), ("cg", "cg")):
        if algorithm.startswith(prefix):
            return fam
    return "other"


def _has(frame, name: str) -> bool:
    return any(c.rsplit(".", 1)[-1] == name for c in getattr(frame, "context", ()))


def _opens(frame, fam: str) -> bool:
    openers = _OPENERS.get(fam, ())
    if openers is None:
        return frame.kernel != "sum_reduction"
    return frame.kernel in openers


def _answer(frames, fam: str) -> int:
    """The index of the pass after which the target holds the algorithm's answer."""
    if fam == "cholesky":
        return max(f.index for f in frames if not _has(f, "first_bad_pivot"))
    if fam == "adat":
        return max(f.index for f in frames if f.kernel != "absmax_reduction")
    if fam == "cg":
        xs = [f.index for f in frames if f.kernel.startswith("saxpy") and float(f.uniforms.get("sign", 1.0)) > 0]
        return xs[0] if xs else frames[-1].index
    return frames[-1].index


def _region(frame) -> str:
    """The cells a pass shaded, as column and row ranges."""
    covered = getattr(frame, "covered", None)
    if covered is None or not np.any(covered):
        return ""
    ys, xs = np.nonzero(covered)
    span = lambda what, a, b: f"{what} {a}" if a == b else f"{what}s {a}-{b}"
    return f" (it writes {span('column', xs.min(), xs.max())}, {span('row', ys.min(), ys.max())})"


_PINGPONG = ("the ping-pong copy: a pass cannot read the texture it writes, so each kernel reads texture S and "
             "writes texture T; this copy writes the same cells back so that S equals T again there, for the "
             "next pass to read (000, Algorithm 2). Every later 'copy' of a rectangle or a texel does the same")


def _words(frame, fam: str, k: int, first_copy: bool, nth: int = 0) -> str:
    """What the pass does in the algorithm, at step k (``nth``: how many passes of the same kernel
    and uniforms came before it)."""
    name = frame.kernel
    gj = _has(frame, "gauss_jordan")
    if gj and name in ("normalization", "elimination") or name in ("saxpy_gpu_scalar", "scalar_quotient"):
        return _special(frame, name, nth)
    if name == "copy" and (_has(frame, "swap_lines") or _has(frame, "swap_pair")):
        back = all(np.allclose(v.T0[:2], v.V[:2]) for v in frame.vertices)
        return ("the swap's second half: the exchanged lines copied back from T into S (T0 = WPOS)" if back else
                f"the pivot's swap: row or column k = {k} and the pivot's exchanged, two lines into T, each reading "
                "the other's texels in S")
    if name == "copy" and frame.primitive == "line" and fam == "lu":
        row = "the normalized pivot row" if gj else "the pivot row (U's row k, which this step does not change)"
        return (f"copies row k = {k}, {row}, into the other texture, so that both hold it"
                + ("; " + _PINGPONG if first_copy else ""))
    if name == "copy":
        if gj and k < 0:
            return "copies the input (A, then B beside it) into the working texture [A | B]"
        if gj and frame.primitive == "rect" and frame.target[1] < frame.inputs["A"].shape[1]:
            return "copies the right-hand columns, X = A^-1 B, out of [I | X] into the result"
        if k < 0:
            return "copies the input into the working texture (the uploaded texture stays as it came)"
        return _PINGPONG if first_copy else "the ping-pong copy of the cells the previous pass wrote (T into S)"
    return _KERNEL_WORDS.get((fam, name)) or _KERNEL_WORDS.get(name) or _prefixed(name) or f"runs {name}"


def _special(frame, name: str, nth: int) -> str:
    """The words of a kernel that does one of two things, told apart by its uniforms or context."""
    if name == "normalization":
        return "divides the pivot row k by the pivot, so that the pivot becomes 1"
    if name == "elimination":
        return "the rows other than k lose a_ik times the pivot row: a_ij -= a_ik a_kj, clearing column k"
    if name == "scalar_quotient":
        return ("a scalar of CG kept on the GPU: alpha = delta / d^T q" if nth == 0 else
                "a scalar of CG kept on the GPU: beta = delta_new / delta")
    if float(frame.uniforms.get("sign", 1.0)) < 0:
        return "r -= alpha q, the new residual (the scalar read on the GPU)"
    return ("x += alpha d, the new iterate (the scalar read on the GPU)" if nth == 0 else
            "d = r + beta d, the next search direction (the scalar read on the GPU)")


def _prefixed(name: str) -> str | None:
    for prefix, words in _PREFIX_WORDS:
        if name.startswith(prefix):
            return words
    return None


_KERNEL_WORDS = {
    "copy_input": "copies the uploaded matrix into the working texture (the uploaded texture stays as it came)",
    "square_root": "the pivot: L(k, k) = sqrt(a_kk), a_kk being A(k, k) after the earlier steps' updates",
    ("cholesky", "normalization"): "divides column k below the diagonal by the pivot: L(i, k) = a_ik / L(k, k), i > k",
    ("lu", "normalization"): "divides the pivot's column below it by the pivot: the multipliers L(i, k) = a_ik / u_kk",
    "outer_product_subtraction": "the update: the trailing matrix loses the outer product of column k, "
                                 "a_ij -= L(i, k) L(j, k) for i >= j > k",
    "outer_product_subtraction_computed": "the update: a_ij -= L(i, k) L(j, k) for i >= j > k (the kernel computes "
                                          "the pivot's index)",
    "outer_product_subtraction_triad": "the update: a_ij -= L(i, k) L(j, k) for i >= j > k (indices as triads)",
    "inner_product_subtraction": "column k loses the inner products of the earlier columns (left-looking): "
                                 "a_ik -= sum_{j<k} L(i, j) L(k, j) for i >= k",
    "pivot_check": "the check: each pivot L(k, k) that is not positive is flagged with its step k, the others "
                   "with the sentinel 3e+38",
    "min_reduction": "the check's halving minimum of the flags: texel (0, 0) ends holding the first failing step "
                     "(or 3e+38), the one value the host reads back",
    ("lu", "absmax_reduction"): "max|A| by halving (pairs of cells): texel (0, 0) is read back for the threshold "
                                "n u max|A| below which a pivot counts as zero",
    ("adat", "absmax_reduction"): "max|C| by halving: read back to refuse an overflow",
    "argmax_reduction_first": "the pivot search of step k: each cell keeps the larger |a_ij| of a pair of the "
                              "searched region, with its (col, row)",
    "argmax_reduction": "the pivot search, halved again: texel (0, 0) ends holding (|pivot|, col, row), which the "
                        "host reads back to place the swap and to refuse a zero pivot",
    ("lu", "elimination"): "the trailing block loses the multipliers times the pivot row: a_ij -= L(i, k) u_kj",
    "column_scaling": "the column scaling: b(i) = A(i, j) d_j^2, column j of A times its weight",
    "outer_product_addition": "the outer-product addition: C(i, l) += A(i, j) b(l) over the lower triangle",
    ("reduce", "sum_reduction"): "each cell adds a pair of cells of the previous grid: the grid halves",
    ("cg", "sum_reduction"): "the dot product's halving sum: texel (0, 0) ends holding it",
    "sparse_ellpack": "y_i = sum_k val(i, k) x(col(i, k)): each fragment one row, over its K stored entries",
    "fill": "fills the scalar texture with the flag's starting value",
    "pyramid_product": "the dot product's first pass: the elementwise products of the two vectors",
    "matrix_vector_inner_product": "q = A d: each fragment the inner product of a row of A with d",
    "cg_breakdown_flag": "the breakdown watch: notes the iteration where d^T A d is not positive",
    "scalar_quotient": "a scalar of CG on the GPU: alpha = delta / d^T q (or beta = delta_new / delta)",
    "saxpy_gpu_scalar": "the update x += alpha d (sign +1) or r -= alpha q (sign -1), with the scalar on the GPU",
    "saxpy": "d = r + beta d, the new search direction",
    "cg_converged": "the convergence watch: notes the iteration where the residual reached the target",
    "pack_2x2": "packs the matrix into RGBA 2 x 2 blocks (the blocked form's storage)",
    "unpack_2x2": "unpacks the panel's columns from the RGBA blocks into a plain texture, to factor them",
    "pack_panel": "writes the factored panel back into the RGBA blocks",
    "panel_rgba": "puts the panel's 4 columns into one RGBA texel a row, for the rank-4 update",
    "permute_rows_2x2": "applies the panel's row swaps to the whole matrix (a permutation gathered by rows)",
}
_PREFIX_WORDS = (("blocked_update", "the panel's rank-4 update: the trailing matrix loses L_panel L_panel^T"),
                 ("row_panel_solve", "the row panel U12 = L11^-1 A12: each fragment a forward substitution down its "
                                     "column with the panel's unit lower L11"),
                 ("panel_rows_rgba", "puts the row panel's 4 rows into one RGBA texel a column, for the rank-4 update"),
                 ("lu_blocked_update_gather", "the panel's rank-4 update of the trailing block: a_ij -= sum over the "
                                              "panel's 4 columns of L(i, c) U(c, j)"),
                 ("lu_panel_gather", "gathers the panel's rows through the pivots' permutation"),
                 ("lu_panel_step_search", "the pivot search inside the panel"),
                 ("sum_reduction", "adds pairs of cells: the grid halves"))


def plain_words(frames, algorithm: str) -> list:
    """For each frame, ``{"plain": sentence, "step": k or None, "steps": S, "answer": bool}``: the
    sentence starts with "Step k = j of S:" ("Before step k = 0 of S:" for the passes that prepare
    the steps, "After the last step (k = S-1 of S):" for the checks after the answer); the pass
    after which the target holds the answer ends with a sentence saying so."""
    fam = family(algorithm)
    steps = sum(1 for f in frames if _opens(f, fam)) or 1
    answer = _answer(frames, fam) if frames else -1
    out, k, copied, seen = [], -1, False, {}
    for f in frames:
        key = (f.kernel, float(f.uniforms.get("sign", 0.0)) if hasattr(f, "uniforms") else 0.0)
        nth = seen[key] = seen.get(key, -1) + 1
        if _opens(f, fam):
            k += 1
        is_copy = f.kernel == "copy" and k >= 0 and not _has(f, "swap_lines") and not (
            f.primitive == "line" and fam != "lu")
        words = _words(f, fam, k, is_copy and not copied, nth)
        copied = copied or is_copy
        if f.index > answer and fam != "cg":
            head = f"After the last step (k = {steps - 1} of {steps}): "
        elif k < 0:
            head = f"Before step k = 0 of {steps}: "
        else:
            head = f"Step k = {k} of {steps}: "
        text = head + words + _region(f) + "."
        if f.index == answer:
            text += " After this pass the target holds the answer" + (
                "." if answer == frames[-1].index else
                "; the passes after it prepare the next iteration (r's norm, beta, d)." if fam == "cg" else
                "; the passes after it only check it.")
        out.append({"plain": text, "step": k if k >= 0 else None, "steps": steps, "answer": f.index == answer})
    return out
