// Beyond the papers (issue 11): cholesky_step.frag -- a whole step k of the outer-product
// Cholesky (Algorithm 2 of 000) in one pass over Fig. 5 of 001's triangle moved one column
// left -- in float-float arithmetic (float_float.glsl), for a factor accurate to about 1e-14:
//     L(k, k) = sqrt(d),  L(i, k) = S(i, k) / sqrt(d),  L(i, j) = S(i, j) - S(i, k) S(j, k) / d,
// d = S(k, k), replaced by `huge` when the guard finds its high part not above tolerance x
// M0(k, k); S(j, k) fetched through the swizzle. Column k - 1 is copied. The vertex program
// (cholesky_pivot_ff.vert) computes d, sqrt(d) and their reciprocals once a vertex, and the
// fragments multiply by the reciprocals where they would divide:
//     L(i, k) = S(i, k) (1 / sqrt(d)),  L(i, j) = S(i, j) - (S(i, k) S(j, k)) (1 / d).
uniform sampler2D L;
uniform int k;
flat in vec4 PIVOT;             // d, sqrt(d): from the vertex program (cholesky_pivot_ff.vert)
flat in vec4 RECIPROCALS;       // 1 / d, 1 / sqrt(d)
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column j, row i)
    if (t.x < k) {                           // column k - 1: copied
        result = texelFetch(L, t, 0);
        return;
    }
    vec2 lik = texelFetch(L, ivec2(k, t.y), 0).rg;
    vec2 r;
    if (t.x == k)
        r = t.y == k ? PIVOT.zw : ff_mul(lik, RECIPROCALS.zw);
    else
        r = ff_sub(texelFetch(L, t, 0).rg, ff_mul(ff_mul(lik, texelFetch(L, ivec2(k, t.x), 0).rg), RECIPROCALS.xy));
    result = vec4(r, 0.0, 0.0);
}
