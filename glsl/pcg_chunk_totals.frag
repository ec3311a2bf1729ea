// The totals of pcg_chunk_sums (beyond 002), one fragment each, 1 x (k + 3):
//     c < k:   z(K_c) = (H r_K)_c - g_c, P^-1 r at the pivoted entries: 002 (7)'s backward half,
//              C^-T (C^-1 r_K - B^T w) = G11^-1 r_K - F^T w
//     k:       gamma = r^T z = sum w (r - phi) + r_K^T H r_K
//     k + 1:   beta = gamma / gamma_old, gamma_old the .r of texel k of Prev (the last totals);
//              0 where it is not finite
//     k + 2:   ||r||^2
uniform sampler2D S;        // pcg_chunk_sums
uniform sampler2D H;
uniform sampler2D XR;
uniform sampler2D Kpos;
uniform sampler2D Prev;     // the totals of the iteration before
uniform int k;
uniform int chunks;         // chunks of the m entries (fragments of S's rows)
uniform int width;
out float result;

float row_total(int c, int count) {
    float sum = 0.0;
    for (int j = 0; j < count; ++j)
        sum += texelFetch(S, ivec2(j, c), 0).r;
    return sum;
}

float r_at(int e) {
    return texelFetch(XR, ivec2(e % width, e / width), 0).b;
}

void main() {
    int c = int(WPOS.x);
    if (c < k) {
        float hr = 0.0;
        for (int l = 0; l < k; ++l)
            hr += texelFetch(H, ivec2(l, c), 0).r * r_at(int(texelFetch(Kpos, ivec2(l, 0), 0).r));
        result = hr - row_total(c, chunks);
    } else if (c == k + 2) {
        result = row_total(k + 1, chunks);
    } else {
        float gamma = row_total(k, chunks) + row_total(k + 2, k);
        float beta = gamma / texelFetch(Prev, ivec2(k, 0), 0).r;
        if (!(abs(beta) < 3.0e38)) beta = 0.0;    // 0 / 0 once r is 0: a restart, as saxpy_ratio
        result = c == k ? gamma : beta;
    }
}
