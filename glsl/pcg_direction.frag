// PCG's new direction p' = z + beta p (002 section 2.1, [9]) with z = P^-1 r put together on
// the way and the totals of pcg_chunk_sums added by the fragments that use them (beyond 002:
// no pass of totals between the sums and the direction; pcg_sums.glsl):
//     beta = gamma / gamma_old, gamma = r^T z = sum w (r - phi) + r_K^T H r_K, gamma_old the
//            last iteration's (texel 0 .g of the scalars); 0 where gamma_old is 0 (the first
//            iteration, p = 0) or the quotient is not finite
//     z = w off the pivoted entries (w is 0 at K); at entry K_c (Slot: c there, -1 elsewhere)
//            z(K_c) = (H r_K)_c - g_c: 002 (7)'s backward half, C^-T (C^-1 r_K - B^T w) =
//            G11^-1 r_K - F^T w (g_c: component c % 4 of the total of row c / 4)
uniform sampler2D W;        // (w, r - phi, 0, 0): pcg_update_forward
uniform sampler2D Slot;
uniform sampler2D S;        // pcg_chunk_sums (RGBA)
uniform sampler2D H;
uniform sampler2D Sc;       // the scalars: gamma_old in texel 0, r_K from texel 2 on
uniform sampler2D P;        // p
uniform int k;
uniform int k4;
uniform int chunks;         // chunks of the m entries (fragments of S's rows)
out float result;

float h_r(int c) {          // (H r_K)_c
    float hr = 0.0;
    int l = 0;
    for (; l + 4 <= k; l += 4) {
        vec4 r = texelFetch(Sc, ivec2(2 + l / 4, 0), 0);
        vec4 h = vec4(texelFetch(H, ivec2(l, c), 0).r, texelFetch(H, ivec2(l + 1, c), 0).r,
                      texelFetch(H, ivec2(l + 2, c), 0).r, texelFetch(H, ivec2(l + 3, c), 0).r);
        hr += h.x * r.x;
        hr += h.y * r.y;
        hr += h.z * r.z;
        hr += h.w * r.w;
    }
    for (; l < k; ++l)
        hr += texelFetch(H, ivec2(l, c), 0).r * texelFetch(Sc, ivec2(2 + l / 4, 0), 0)[l % 4];
    return hr;
}

void main() {
    ivec2 t = ivec2(WPOS);
    int c = int(texelFetch(Slot, t, 0).r);
    float gamma = sums_gamma_rr(S, k4, chunks).x;
    float old = texelFetch(Sc, ivec2(0, 0), 0).g;
    float beta = old != 0.0 ? gamma / old : 0.0;
    if (!(abs(beta) < 3.0e38)) beta = 0.0;      // 0 / 0 once r is 0: a restart, as saxpy_ratio
    float z = texelFetch(W, t, 0).r;
    if (c >= 0)
        z += h_r(c) - sums_row_total(S, c / 4, chunks)[c % 4];
    result = z + beta * texelFetch(P, t, 0).r;
}
