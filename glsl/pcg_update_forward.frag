// PCG's update of 002 section 2.1 ([9]) and the forward half of its partial Cholesky
// preconditioner (7)-(8) in one pass with two render targets (beyond 002: the update of one
// iteration and the preconditioner of the next, each a pass of its own there, drawn as one):
//
// state   = (x', r'): x' = x + alpha p, r' = r - alpha q with q = G_R p = A Theta~ A^T p +
//           delta p, whose sparse part y the products left; with FLOAT_FLOAT x is float-float
//           (.r hi, .g lo: alpha p exact by 2Prod, the sum to about 48 bits), else float32 in
//           .r (.g stays 0). alpha is texel 1's .r of the scalars (pcg_step_scalars); where it
//           is 0 (the first iteration, a breakdown, or r already 0) x and r stay as they are.
// forward = (w, r' - phi): w = D_S^-1 (r' - phi), phi = sum_j F_j r'(K_j), F = B C^-1 =
//           G[:, K] G11^-1 (made once a preconditioner), so that B u1 = F r_K with u1 =
//           C^-1 r_K: 002's two passes u1 = C^-1 r1 and D_S^-1 (r - B u1) as one sum. Four
//           planes of F a texel (plane_mix with FOUR) against four of the updated residuals
//           at the pivots r'_K a texel (texels 2 .. of the scalars, which pcg_step_scalars
//           computed as this pass computes r'): k / 2 fetches a fragment, issued GROUP planes
//           at a time. D_S^-1 is 0 at K, so w is too; .g keeps r' - phi for r^T z.
uniform sampler2D XR;       // (x hi, x lo, r, 0) before the update
uniform sampler2D P;        // the direction of the step
uniform sampler2D Y;        // A Theta~ A^T p
uniform sampler2D Sc;       // pcg_step_scalars: alpha, r'(K) from texel 2 on
uniform sampler2D F;        // RGBA, k4 = ceil(k / 4) planes of four columns of G[:, K] G11^-1
uniform sampler2D Dinv;     // D_S^-1, 0 at K
uniform int k4;
uniform int plane_rows;
uniform float delta;
layout(location = 0) out vec4 state;
layout(location = 1) out vec4 forward;

const int GROUP = 4;        // planes whose fetches are in flight together

vec4 plane(ivec2 t, int b) {
    return texelFetch(F, ivec2(t.x, t.y + b * plane_rows), 0);
}

vec4 pivots(int b) {
    return texelFetch(Sc, ivec2(2 + b, 0), 0);
}

void main() {
    ivec2 t = ivec2(WPOS);
    vec4 xr = texelFetch(XR, t, 0);
    float alpha = texelFetch(Sc, ivec2(1, 0), 0).r;
    if (alpha != 0.0) {
        float p = texelFetch(P, t, 0).r;
        float q = texelFetch(Y, t, 0).r + delta * p;
#ifdef FLOAT_FLOAT
        xr.rg = ff_add(xr.rg, two_prod(alpha, p));
#else
        xr.rg = vec2(xr.r + alpha * p, 0.0);
#endif
        xr.b = xr.b - alpha * q;
    }
    state = xr;
    float phi = 0.0;
    int b = 0;
    for (; b + GROUP <= k4; b += GROUP) {
        vec4 f[GROUP], r[GROUP];
        for (int g = 0; g < GROUP; ++g) {
            f[g] = plane(t, b + g);
            r[g] = pivots(b + g);
        }
        for (int g = 0; g < GROUP; ++g)
            phi += dot(f[g], r[g]);
    }
    for (; b < k4; ++b)
        phi += dot(plane(t, b), pivots(b));
    float rest = xr.b - phi;
    forward = vec4(texelFetch(Dinv, t, 0).r * rest, rest, 0.0, 0.0);
}
