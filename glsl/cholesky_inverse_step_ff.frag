// Beyond the papers: cholesky_inverse_step.frag -- step k of the one-pass Cholesky and step k of
// X = L^-1 in one pass over the texture that holds both side by side (the working matrix in
// columns 0 .. m-1, X in columns m .. 2m-1) -- in float-float arithmetic (float_float.glsl), so
// that an interior point method's solves are two products with X (triangular_product_ff) instead
// of 2m substitution passes. Both halves read the state before step k:
//     L(k, k) = sqrt(d),  L(i, k) = S(i, k) / sqrt(d),  L(i, j) = S(i, j) - S(i, k) S(j, k) / d,
//     X(k, j) = X(k, j) / L(k, k),  X(i, j) = X(i, j) - L(i, k) X(k, j)           (j <= k < i),
// d = S(k, k), replaced by `huge` when the guard finds its high part not above tolerance x
// M0(k, k): the vertex program computes d, sqrt(d) and their reciprocals once a vertex, and the
// fragments multiply by the reciprocals. The primitive is cholesky_inverse_step's. hi in .r, lo in .g.
uniform sampler2D L;
uniform int k;
uniform int m;
flat in vec4 PIVOT;             // d, sqrt(d): from the vertex program (cholesky_pivot_ff.vert)
flat in vec4 RECIPROCALS;       // 1 / d, 1 / sqrt(d)
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    vec2 lkk = PIVOT.zw;
    vec2 inv_d = RECIPROCALS.xy;
    vec2 inv_lkk = RECIPROCALS.zw;
    if (t.x < m) {                           // the Cholesky half: cholesky_step_ff
        if (t.x < k) {                       // column k - 1: copied
            result = texelFetch(L, t, 0);
            return;
        }
        vec2 lik = texelFetch(L, ivec2(k, t.y), 0).rg;
        vec2 r;
        if (t.x == k)
            r = t.y == k ? lkk : ff_mul(lik, inv_lkk);
        else
            r = ff_sub(texelFetch(L, t, 0).rg, ff_mul(ff_mul(lik, texelFetch(L, ivec2(k, t.x), 0).rg), inv_d));
        result = vec4(r, 0.0, 0.0);
        return;
    }
    if (t.y < k) {                           // the inverse half, row k - 1: copied
        result = texelFetch(L, t, 0);
        return;
    }
    vec2 xk = ff_mul(texelFetch(L, ivec2(t.x, k), 0).rg, inv_lkk);
    vec2 r = t.y == k ? xk : ff_sub(texelFetch(L, t, 0).rg, ff_mul(ff_mul(texelFetch(L, ivec2(k, t.y), 0).rg, inv_lkk), xk));
    result = vec4(r, 0.0, 0.0);
}
