// Beyond the papers: the trailing update of the blocked factor with its inverse. After the
// one-step passes of the block's columns k0 .. k1-1 (cholesky_inverse_step drawn over the
// block's panel and X's block rows only), this pass brings everything below and right of the
// block up to date by the block's b = k1 - k0 finished columns of L and rows of X at once:
//     S(i, j) = S(i, j) - sum over c = k0 .. k1-1 of L(i, c) L(j, c)       (k1 <= j <= i),
//     X(i, j) = X(i, j) - sum over c = k0 .. k1-1 of L(i, c) X(c, j)       (i >= k1, j < k1),
// the terms the one-step passes k0 .. k1-1 would have taken off one at a time, in their order
// (rounded as products of finished entries, where a step pass rounds S(i, c) S(j, c) / d), so
// that the texels below the block are written once a block instead of once a step. Its
// primitive also copies the block's panel (columns k0 .. k1-1 of the rows from k0 down) and
// X's block rows, finished by the passes before, into this target. The working matrix in
// columns 0 .. m-1, X in columns m .. 2m-1, as in cholesky_inverse_step.
uniform sampler2D L;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    float acc = texelFetch(L, t, 0).r;
    if (t.x < m ? t.x < k1 : t.y < k1) {     // the block's panel, X's block rows: copied
        result = acc;
        return;
    }
    if (t.x < m)                             // L(i, c) L(j, c): row i's and row j's entries of the panel
        for (int c = k0; c < k1; c++)
            acc -= texelFetch(L, ivec2(c, t.y), 0).r * texelFetch(L, ivec2(c, t.x), 0).r;
    else                                     // L(i, c) X(c, j): row i of the panel, column j of X's block rows
        for (int c = k0; c < k1; c++)
            acc -= texelFetch(L, ivec2(c, t.y), 0).r * texelFetch(L, ivec2(t.x, c), 0).r;
    result = acc;
}
