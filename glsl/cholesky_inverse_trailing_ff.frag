// Beyond the papers: cholesky_inverse_trailing.frag in float-float arithmetic (float_float.glsl):
// after the one-step passes of the block's columns k0 .. k1-1 (cholesky_inverse_step_ff over the
// block's panel and X's block rows), the texels below and right of the block take off the block's
// b = k1 - k0 terms in one pass:
//     S(i, j) = S(i, j) - sum over c = k0 .. k1-1 of L(i, c) L(j, c)       (k1 <= j <= i),
//     X(i, j) = X(i, j) - sum over c = k0 .. k1-1 of L(i, c) X(c, j)       (i >= k1, j < k1),
// one term at a time in the steps' order, both factors from P, the panel packed two columns a
// texel (cholesky_inverse_panel_rgba_ff: rows i and x of P, PACKED texels each); the block's
// panel and X's block rows are copied. hi in .r, lo in .g.
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
    vec2 acc = own.rg;
    for (int q = 0; q < PACKED; q++) {
        vec4 a = texelFetch(P, ivec2(q, t.y), 0);
        vec4 b = texelFetch(P, ivec2(q, t.x), 0);
        acc = ff_sub(ff_sub(acc, ff_mul(a.xy, b.xy)), ff_mul(a.zw, b.zw));
    }
    result = vec4(acc, 0.0, 0.0);
}
