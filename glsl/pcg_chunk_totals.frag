// The totals of pcg_chunk_sums (beyond 002), one fragment each, 1 x (k + 3):
//     c < k:   z(K_c) = (H r_K)_c - g_c, P^-1 r at the pivoted entries: 002 (7)'s backward half,
//              C^-T (C^-1 r_K - B^T w) = G11^-1 r_K - F^T w (g_c: component c % 4 of row c / 4)
//     k:       gamma = r^T z = sum w (r - phi) + r_K^T H r_K
//     k + 1:   beta = gamma / gamma_old, gamma_old the .r of texel k of Prev (the last totals);
//              0 where it is not finite
//     k + 2:   ||r||^2
// Each loop issues GROUP fetches before it adds them, in order (as pcg_chunk_sums).
uniform sampler2D S;        // pcg_chunk_sums (RGBA)
uniform sampler2D H;
uniform sampler2D Sc;       // the scalars, r_K from texel 2 on
uniform sampler2D Prev;     // the totals of the iteration before
uniform int k;
uniform int k4;
uniform int chunks;         // chunks of the m entries (fragments of S's rows)
out float result;

const int GROUP = 4;        // texels whose fetches are in flight together

vec4 row_total(int c, int count) {
    vec4 sum = vec4(0.0);
    int j = 0;
    for (; j + GROUP <= count; j += GROUP) {
        vec4 part[GROUP];
        for (int g = 0; g < GROUP; ++g)
            part[g] = texelFetch(S, ivec2(j + g, c), 0);
        for (int g = 0; g < GROUP; ++g)
            sum += part[g];
    }
    for (; j < count; ++j)
        sum += texelFetch(S, ivec2(j, c), 0);
    return sum;
}

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
    int c = int(WPOS.x);
    if (c < k) {
        result = h_r(c) - row_total(c / 4, chunks)[c % 4];
    } else if (c == k + 2) {
        result = row_total(k4, chunks).g;
    } else {
        vec4 terms = row_total(k4 + 1, k4);
        float gamma = row_total(k4, chunks).r + (terms.r + terms.g + terms.b + terms.a);
        float beta = gamma / texelFetch(Prev, ivec2(k, 0), 0).r;
        if (!(abs(beta) < 3.0e38)) beta = 0.0;    // 0 / 0 once r is 0: a restart, as saxpy_ratio
        result = c == k ? gamma : beta;
    }
}
