// The totals of pcg_chunk_sums (beyond 002), one fragment each, 1 x (k + 3):
//     c < k:   z(K_c) = (H r_K)_c - g_c, P^-1 r at the pivoted entries: 002 (7)'s backward half,
//              C^-T (C^-1 r_K - B^T w) = G11^-1 r_K - F^T w (g_c: component c % 4 of row c / 4)
//     k:       gamma = r^T z = sum w (r - phi) + r_K^T H r_K
//     k + 1:   beta = gamma / gamma_old, gamma_old the .r of texel k of Prev (the last totals);
//              0 where it is not finite
//     k + 2:   ||r||^2
uniform sampler2D S;        // pcg_chunk_sums (RGBA)
uniform sampler2D H;
uniform sampler2D Sc;       // the scalars, r_K from texel 2 on
uniform sampler2D Prev;     // the totals of the iteration before
uniform int k;
uniform int k4;
uniform int chunks;         // chunks of the m entries (fragments of S's rows)
out float result;

vec4 row_total(int c, int count) {
    vec4 sum = vec4(0.0);
    for (int j = 0; j < count; ++j)
        sum += texelFetch(S, ivec2(j, c), 0);
    return sum;
}

void main() {
    int c = int(WPOS.x);
    if (c < k) {
        float hr = 0.0;
        for (int l = 0; l < k; ++l)
            hr += texelFetch(H, ivec2(l, c), 0).r * texelFetch(Sc, ivec2(2 + l / 4, 0), 0)[l % 4];
        result = hr - row_total(c / 4, chunks)[c % 4];
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
