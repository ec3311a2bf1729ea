// Beyond the papers (issue 11): cholesky_step.frag -- a whole step k of the outer-product
// Cholesky (Algorithm 2 of 000) in one pass over Fig. 5 of 001's triangle moved one column
// left -- in float-float arithmetic (float_float.glsl), for a factor accurate to about 1e-14:
//     L(k, k) = sqrt(d),  L(i, k) = S(i, k) / sqrt(d),  L(i, j) = S(i, j) - S(i, k) S(j, k) / d,
// d = S(k, k), replaced by `huge` when the guard finds its high part not above tolerance x
// M0(k, k); S(j, k) fetched through the swizzle. Column k - 1 is copied.
uniform sampler2D L;
uniform sampler2D M0;
uniform int k;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column j, row i)
    if (t.x < k) {                           // column k - 1: copied
        result = texelFetch(L, t, 0);
        return;
    }
    vec2 d = texelFetch(L, ivec2(k, k), 0).rg;
    if (guarded) {
        bool ok = d.x > tolerance * texelFetch(M0, ivec2(k, k), 0).r && !isinf(d.x) && !isnan(d.x);
        d = ok ? d : vec2(huge, 0.0);
    }
    vec2 lik = texelFetch(L, ivec2(k, t.y), 0).rg;
    vec2 r;
    if (t.x == k)
        r = t.y == k ? ff_sqrt(d) : ff_div(lik, ff_sqrt(d));
    else
        r = ff_sub(texelFetch(L, t, 0).rg, ff_div(ff_mul(lik, texelFetch(L, ivec2(k, t.x), 0).rg), d));
    result = vec4(r, 0.0, 0.0);
}
