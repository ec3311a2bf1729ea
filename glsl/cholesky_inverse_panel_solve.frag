// Beyond the papers: the block's panel below its diagonal block, and X's block rows left of it,
// in one pass, from the block's inverse X11 = L11^-1 that cholesky_inverse_diagonal (the pass
// before) left in X's half:
//     L(i, j) = sum over p = k0 .. j of S(i, p) X11(j, p)       (i >= k1, k0 <= j < k1),
//     X(r, c) = sum over p = k0 .. r of X11(r, p) X(p, c)       (k0 <= r < k1, c < k0),
// L21 = S21 L11^-T, the b steps' substitutions below the block as one product, and the block's
// rows of X = L11^-1 times what the blocks before left in them (L X = I row block by row block).
// The block's diagonal part, L11 and X11 with its zeros above the diagonal, is copied. The
// working matrix in columns 0 .. m-1, X in columns m .. 2m-1, as in cholesky_inverse_step.
uniform sampler2D L;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    if (t.x < m ? t.y < k1 : t.x - m >= k0) {   // L11, X11 and the zeros above it: copied
        result = texelFetch(L, t, 0).r;
        return;
    }
    float sum = 0.0;
    if (t.x < m) {                           // L(i, j), j = t.x
        for (int p = k0; p <= t.x; p++)
            sum += texelFetch(L, ivec2(p, t.y), 0).r * texelFetch(L, ivec2(m + p, t.x), 0).r;
    } else {                                 // X(r, c), r = t.y, c = t.x - m
        for (int p = k0; p <= t.y; p++)
            sum += texelFetch(L, ivec2(m + p, t.y), 0).r * texelFetch(L, ivec2(t.x, p), 0).r;
    }
    result = sum;
}
