// Beyond the papers: cholesky_inverse_diagonal.frag -- the block's diagonal factor L11 and its
// inverse X11 = L11^-1, every fragment of the block's diagonal part factoring the block in
// registers -- in float-float arithmetic (float_float.glsl), by the steps of
// cholesky_inverse_step_ff in their order:
//     d = S(k, k) (its high part guarded as there),  L(k, k) = sqrt(d),
//     L(i, k) = S(i, k) (1 / sqrt(d)),  S(i, j) = S(i, j) - (S(i, k) S(j, k)) (1 / d),
//     X(k, j) = X(k, j) (1 / L(k, k)),  X(i, j) = X(i, j) - L(i, k) X(k, j).
// Outside the block's lower triangle the primitive's texels are copied. hi in .r, lo in .g.
uniform sampler2D L;
uniform sampler2D M0;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out vec4 result;

#define AT(i, j) ((i) * ((i) + 1) / 2 + (j))     // the lower triangle, row by row

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    int i = t.y - k0;
    int j = (t.x < m ? t.x : t.x - m) - k0;
    int b = k1 - k0;
    if (i >= b || j < 0 || j > i) {          // outside the block's lower triangle: copied
        result = texelFetch(L, t, 0);
        return;
    }
    vec2 a[BLOCK * (BLOCK + 1) / 2];
    vec2 inv_root[BLOCK];
    for (int r = 0; r < BLOCK; r++)
        for (int c = 0; c <= r; c++)
            a[AT(r, c)] = r < b ? texelFetch(L, ivec2(k0 + c, k0 + r), 0).rg : vec2(r == c ? 1.0 : 0.0, 0.0);
    for (int k = 0; k < BLOCK; k++) {
        vec2 d = a[AT(k, k)];
        if (guarded && k < b) {
            bool ok = d.x > tolerance * texelFetch(M0, ivec2(k0 + k, k0 + k), 0).r && !isinf(d.x) && !isnan(d.x);
            d = ok ? d : vec2(huge, 0.0);
        }
        vec2 root = ff_sqrt(d);
        vec2 inv_d = ff_div(vec2(1.0, 0.0), d);
        inv_root[k] = ff_div(vec2(1.0, 0.0), root);
        for (int r = k + 1; r < BLOCK; r++)
            for (int c = k + 1; c <= r; c++)
                a[AT(r, c)] = ff_sub(a[AT(r, c)], ff_mul(ff_mul(a[AT(r, k)], a[AT(c, k)]), inv_d));
        for (int r = k + 1; r < BLOCK; r++)
            a[AT(r, k)] = ff_mul(a[AT(r, k)], inv_root[k]);
        a[AT(k, k)] = root;
    }
    if (t.x < m) {
        result = vec4(a[AT(i, j)], 0.0, 0.0);
        return;
    }
    vec2 x[BLOCK];                           // column j of X11, from column j of I
    for (int r = 0; r < BLOCK; r++)
        x[r] = vec2(r == j ? 1.0 : 0.0, 0.0);
    for (int k = 0; k < BLOCK; k++) {
        x[k] = ff_mul(x[k], inv_root[k]);
        for (int r = k + 1; r < BLOCK; r++)
            x[r] = ff_sub(x[r], ff_mul(a[AT(r, k)], x[k]));
    }
    result = vec4(x[i], 0.0, 0.0);
}
