// The forward half of the partial Cholesky preconditioner of paper 002, (7)-(8), in one pass
// (beyond 002: its two passes u1 = C^-1 r1 and D_S^-1 (r - B u1) merged): with F = B C^-1 =
// G[:, K] G11^-1 (made once a preconditioner), B u1 = F r_K, so
//     w = D_S^-1 (r - phi),  phi = sum_j F_j r(K_j),
// four planes of F a texel (plane_mix with FOUR: plane b holds F_4b .. F_4b+3) against four
// of the pivots' residuals r_K a texel (texels 2 .. of the scalars, which pcg_step_scalars
// gathers): k / 2 fetches a fragment. D_S^-1 is 0 at K, so w is too. The fragment also keeps
// r - phi (.g): PCG's r^T z is sum_i w_i (r_i - phi_i) + r_K^T H r_K. r is PCG's residual,
// the .b of its state texel (x hi, x lo, r, 0).
uniform sampler2D XR;       // PCG's state: (x hi, x lo, r, 0) an entry
uniform sampler2D F;        // RGBA, k4 = ceil(k / 4) planes of four columns of G[:, K] G11^-1
uniform sampler2D Sc;       // the scalars: texel 2 + b holds r(K_4b) .. r(K_4b+3)
uniform sampler2D Dinv;     // D_S^-1, 0 at K
uniform int k4;
uniform int plane_rows;
out vec4 result;

void main() {
    ivec2 t = ivec2(WPOS);
    float phi = 0.0;
    for (int b = 0; b < k4; ++b)
        phi += dot(texelFetch(F, ivec2(t.x, t.y + b * plane_rows), 0), texelFetch(Sc, ivec2(2 + b, 0), 0));
    float rest = texelFetch(XR, t, 0).b - phi;
    result = vec4(texelFetch(Dinv, t, 0).r * rest, rest, 0.0, 0.0);
}
