// Beyond the papers: cholesky_inverse_panel_solve.frag in float-float arithmetic
// (float_float.glsl): from X11 = L11^-1, which cholesky_inverse_diagonal_ff left in X's half,
//     L(i, j) = sum over p = k0 .. j of S(i, p) X11(j, p)       (i >= k1, k0 <= j < k1),
//     X(r, c) = sum over p = k0 .. r of X11(r, p) X(p, c)       (k0 <= r < k1, c < k0);
// L11, X11 and the zeros above it copied. hi in .r, lo in .g.
uniform sampler2D L;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    if (t.x < m ? t.y < k1 : t.x - m >= k0) {   // L11, X11 and the zeros above it: copied
        result = texelFetch(L, t, 0);
        return;
    }
    vec2 sum = vec2(0.0);
    if (t.x < m) {                           // L(i, j), j = t.x
        for (int p = k0; p <= t.x; p++)
            sum = ff_add(sum, ff_mul(texelFetch(L, ivec2(p, t.y), 0).rg, texelFetch(L, ivec2(m + p, t.x), 0).rg));
    } else {                                 // X(r, c), r = t.y, c = t.x - m
        for (int p = k0; p <= t.y; p++)
            sum = ff_add(sum, ff_mul(texelFetch(L, ivec2(m + p, t.y), 0).rg, texelFetch(L, ivec2(t.x, p), 0).rg));
    }
    result = vec4(sum, 0.0, 0.0);
}
