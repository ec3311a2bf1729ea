// Beyond the papers: cholesky_inverse_trailing.frag in float-float arithmetic (float_float.glsl):
// after the one-step passes of the block's columns k0 .. k1-1 (cholesky_inverse_step_ff over the
// block's panel and X's block rows), the texels below and right of the block take off the block's
// b = k1 - k0 terms in one pass:
//     S(i, j) = S(i, j) - sum over c = k0 .. k1-1 of L(i, c) L(j, c)       (k1 <= j <= i),
//     X(i, j) = X(i, j) - sum over c = k0 .. k1-1 of L(i, c) X(c, j)       (i >= k1, j < k1),
// one term at a time in the steps' order, both factors from P, the panel packed two columns a
// texel (cholesky_inverse_panel_rgba_ff: rows i and x of P, PACKED texels each); the block's
// panel and X's block rows are copied. hi in .r, lo in .g.
//
// The running value is a float32 sum s and a float32 error e (s + e, as a float-float number).
// A term u v (u = u.hi + u.lo, v likewise) comes off as its exact high product p + q (2Prod:
// u.hi v.hi = p + q), its cross terms u.hi v.lo + u.lo v.hi rounded once (u.lo v.lo, below
// 2^-48 |u v|, left out), s - p exactly (TwoSum: s' + d), and d - q - cross added into e; s + e
// is renormalized (TwoSum) once a texel, every two terms. This is the accumulation of Ogita,
// Rump and Oishi's Dot2 ("Accurate sum and dot product", SIAM J. Sci. Comput. 26, 2005) with
// float-float operands: about 12 float operations a term where the exact DWTimesDW and
// DWPlusDW of float_float.glsl take about 30. Each term's rounding is a few 2^-48 of the larger
// of |s| and |u v| (DWPlusDW's is of the result), as float64 arithmetic's 2^-53 is of its
// operands: the factor stays within float-float rounding of float64's (docs/guide/lp.md).
uniform sampler2D L;
uniform sampler2D P;            // the block's panel, two columns a texel (PACKED texels a row)
uniform int k1;                 // one past the block's last column
uniform int m;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    vec4 own = texelFetch(L, t, 0);
    if (t.x < m ? t.x < k1 : t.y < k1) {     // the block's panel, X's block rows: copied
        result = own;
        return;
    }
    float s = own.r, e = own.g;              // the running value s + e
    for (int q = 0; q < PACKED; q++) {
        vec4 u = texelFetch(P, ivec2(q, t.y), 0);    // L(i, c), L(i, c + 1): hi, lo, hi, lo
        vec4 v = texelFetch(P, ivec2(q, t.x), 0);    // L(j, c), L(j, c + 1) or X(c, j), X(c + 1, j)
        vec2 p0 = two_prod(u.x, v.x);
        precise float cross0 = u.x * v.y + u.y * v.x;
        vec2 d0 = two_sum(s, -p0.x);
        precise float e0 = e + (d0.y - (p0.y + cross0));
        vec2 p1 = two_prod(u.z, v.z);
        precise float cross1 = u.z * v.w + u.w * v.z;
        vec2 d1 = two_sum(d0.x, -p1.x);
        precise float e1 = e0 + (d1.y - (p1.y + cross1));
        vec2 r = two_sum(d1.x, e1);
        s = r.x;
        e = r.y;
    }
    result = vec4(s, e, 0.0, 0.0);
}
