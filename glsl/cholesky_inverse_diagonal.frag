// Beyond the papers: the diagonal block of the blocked factor with its inverse in one pass.
// For the block of columns k0 .. k1-1 (b = k1 - k0 <= BLOCK columns), every fragment of the
// block's diagonal part factors the block's b x b matrix S(k0 .., k0 ..) in registers by the
// steps of cholesky_inverse_step, in their order,
//     d = S(k, k) (guarded as there),  L(k, k) = sqrt(d),  L(i, k) = S(i, k) / sqrt(d),
//     S(i, j) = S(i, j) - S(i, k) S(j, k) / d                                   (k < j <= i),
// and then, in X's half, forms its column of the block's inverse X11 = L11^-1 by the inverse's
// steps (X(k, j) = X(k, j) / L(k, k), X(i, j) = X(i, j) - L(i, k) X(k, j), from I):
//     working half, rows and columns k0 .. k1-1 (j <= i):   L(i, j)
//     X's half, the same rows and columns (j <= i):           X11(i, j)
// (the block's rows of X hold I's entries there until this pass). Every other fragment of its
// primitive -- the block's panel below it, X's block rows left of it, X11's zeros above its
// diagonal -- copies its texel, so that cholesky_inverse_panel_solve, the next pass, reads them
// all from this pass's target. Rows past k1 (the last block, when b < BLOCK) are taken as the
// identity's: the factor of diag(S, I) is diag(L, I). The working matrix in columns 0 .. m-1, X
// in columns m .. 2m-1, as in cholesky_inverse_step. Every array index is a counter of a loop
// with constant bounds (BLOCK is a compile-time constant), so that a compiler may keep the arrays
// in registers.
uniform sampler2D L;
uniform sampler2D M0;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out float result;

#define AT(i, j) ((i) * ((i) + 1) / 2 + (j))     // the lower triangle, row by row

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    int i = t.y - k0;
    int j = (t.x < m ? t.x : t.x - m) - k0;
    int b = k1 - k0;
    if (i >= b || j < 0 || j > i) {          // outside the block's lower triangle: copied
        result = texelFetch(L, t, 0).r;
        return;
    }
    float a[BLOCK * (BLOCK + 1) / 2];
    for (int r = 0; r < BLOCK; r++)
        for (int c = 0; c <= r; c++)
            a[AT(r, c)] = r < b ? texelFetch(L, ivec2(k0 + c, k0 + r), 0).r : float(r == c);
    for (int k = 0; k < BLOCK; k++) {
        float d = a[AT(k, k)];
        if (guarded && k < b) {
            bool ok = d > tolerance * texelFetch(M0, ivec2(k0 + k, k0 + k), 0).r && !isinf(d) && !isnan(d);
            d = ok ? d : huge;
        }
        for (int r = k + 1; r < BLOCK; r++)
            for (int c = k + 1; c <= r; c++)
                a[AT(r, c)] = a[AT(r, c)] - a[AT(r, k)] * a[AT(c, k)] / d;
        float root = sqrt(d);
        for (int r = k + 1; r < BLOCK; r++)
            a[AT(r, k)] = a[AT(r, k)] / root;
        a[AT(k, k)] = root;
    }
    if (t.x < m) {
        result = a[AT(i, j)];
        return;
    }
    float x[BLOCK];                          // column j of X11, from column j of I
    for (int r = 0; r < BLOCK; r++)
        x[r] = r == j ? 1.0 : 0.0;
    for (int k = 0; k < BLOCK; k++) {
        x[k] = x[k] / a[AT(k, k)];
        for (int r = k + 1; r < BLOCK; r++)
            x[r] = x[r] - a[AT(r, k)] * x[k];
    }
    result = x[i];
}
