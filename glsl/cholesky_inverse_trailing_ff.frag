// Beyond the papers: cholesky_inverse_trailing.frag in float-float arithmetic (float_float.glsl):
// after the one-step passes of the block's columns k0 .. k1-1 (cholesky_inverse_step_ff over the
// block's panel and X's block rows), the texels below and right of the block take off the block's
// b = k1 - k0 terms in one pass:
//     S(i, j) = S(i, j) - sum over c = k0 .. k1-1 of L(i, c) L(j, c)       (k1 <= j <= i),
//     X(i, j) = X(i, j) - sum over c = k0 .. k1-1 of L(i, c) X(c, j)       (i >= k1, j < k1),
// one term at a time in the steps' order; the block's panel and X's block rows are copied.
// hi in .r, lo in .g.
uniform sampler2D L;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
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
    if (t.x < m)                             // L(i, c) L(j, c)
        for (int c = k0; c < k1; c++)
            acc = ff_sub(acc, ff_mul(texelFetch(L, ivec2(c, t.y), 0).rg, texelFetch(L, ivec2(c, t.x), 0).rg));
    else                                     // L(i, c) X(c, j)
        for (int c = k0; c < k1; c++)
            acc = ff_sub(acc, ff_mul(texelFetch(L, ivec2(c, t.y), 0).rg, texelFetch(L, ivec2(t.x, c), 0).rg));
    result = vec4(acc, 0.0, 0.0);
}
