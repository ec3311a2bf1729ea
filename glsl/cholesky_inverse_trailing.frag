// Beyond the papers: the trailing update of the blocked factor with its inverse. After the
// one-step passes of the block's columns k0 .. k1-1 (cholesky_inverse_step drawn over the
// block's panel and X's block rows only), this pass brings everything below and right of the
// block up to date by the block's b = k1 - k0 finished columns of L and rows of X at once:
//     S(i, j) = S(i, j) - sum over c = k0 .. k1-1 of L(i, c) L(j, c)       (k1 <= j <= i),
//     X(i, j) = X(i, j) - sum over c = k0 .. k1-1 of L(i, c) X(c, j)       (i >= k1, j < k1),
// the terms the one-step passes k0 .. k1-1 would have taken off one at a time (rounded as
// products of finished entries, where a step pass rounds S(i, c) S(j, c) / d), so that the
// texels below the block are written once a block instead of once a step. Both factors come
// from P, the panel packed four columns a texel (cholesky_inverse_panel_rgba): row i of P holds
// L(i, c ..), row j < m L(j, c ..) and row m + j X(c .., j), so the fragment at texel column x
// reads P's rows i and x, PACKED texels each: four products a fetch, summed four at a time.
// Its primitive also copies the block's panel (columns k0 .. k1-1 of the rows from k0 down) and
// X's block rows, finished by the passes before, into this target. The working matrix in
// columns 0 .. m-1, X in columns m .. 2m-1, as in cholesky_inverse_step.
uniform sampler2D L;
uniform sampler2D P;            // the block's panel, four columns a texel (PACKED texels a row)
uniform int k1;                 // one past the block's last column
uniform int m;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    float own = texelFetch(L, t, 0).r;
    if (t.x < m ? t.x < k1 : t.y < k1) {     // the block's panel, X's block rows: copied
        result = own;
        return;
    }
    vec4 terms = vec4(0.0);                  // L(i, c) L(j, c) or L(i, c) X(c, j), four columns apart
    for (int q = 0; q < PACKED; q++)
        terms += texelFetch(P, ivec2(q, t.y), 0) * texelFetch(P, ivec2(q, t.x), 0);
    result = own - ((terms.x + terms.y) + (terms.z + terms.w));
}
