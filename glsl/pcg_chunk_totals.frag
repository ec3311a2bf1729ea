// The totals of pcg_chunk_sums (beyond 002), one fragment each, 1 x (k + 3):
//     c < k:   z(K_c) = (X^T u1)_c - g_c, P^-1 r at the pivoted entries: 002 (7)'s backward half,
//              C^-T (C^-1 r_K - B^T w) = C^-T u1 - F^T w (X = C^-1, u1 = X r_K: row k4 + 1 of
//              the sums; g_c: component c % 4 of row c / 4)
//     k:       gamma = r^T z = sum w (r - phi) + ||u1||^2 (r_K^T G11^-1 r_K as a sum of squares)
//     k + 1:   beta = gamma / gamma_old, gamma_old the .r of texel k of Prev (the last totals);
//              0 where it is not finite
//     k + 2:   ||r||^2
// Each loop issues GROUP fetches before it adds them, in order (as pcg_chunk_sums).
uniform sampler2D S;        // pcg_chunk_sums (RGBA)
uniform sampler2D X;        // C^-1, k x k: X(i, l) at texel (l, i)
uniform sampler2D Prev;     // the totals of the iteration before
uniform int k;
uniform int k4;
uniform int chunks;         // chunks of the m entries (fragments of S's rows)
out float result;

const int GROUP = 4;        // texels whose fetches are in flight together
const int PIVOT_TEXELS = 4; // pivots' texels (four entries each) whose fetches are in flight together

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

float xt_u1(int c) {        // (X^T u1)_c = sum_l X(l, c) u1_l (X lower: l >= c count)
    float z = 0.0;
    int l = 0;
    for (; l + 4 * PIVOT_TEXELS <= k; l += 4 * PIVOT_TEXELS) {   // PIVOT_TEXELS of u1, their X in flight
        vec4 u[PIVOT_TEXELS];
        float x[4 * PIVOT_TEXELS];
        for (int g = 0; g < PIVOT_TEXELS; ++g)
            u[g] = texelFetch(S, ivec2(l / 4 + g, k4 + 1), 0);
        for (int g = 0; g < 4 * PIVOT_TEXELS; ++g)
            x[g] = texelFetch(X, ivec2(c, l + g), 0).r;
        for (int g = 0; g < 4 * PIVOT_TEXELS; ++g)
            z += x[g] * u[g / 4][g % 4];
    }
    for (; l + 4 <= k; l += 4) {
        vec4 u = texelFetch(S, ivec2(l / 4, k4 + 1), 0);
        vec4 x = vec4(texelFetch(X, ivec2(c, l), 0).r, texelFetch(X, ivec2(c, l + 1), 0).r,
                      texelFetch(X, ivec2(c, l + 2), 0).r, texelFetch(X, ivec2(c, l + 3), 0).r);
        z += x.x * u.x;
        z += x.y * u.y;
        z += x.z * u.z;
        z += x.w * u.w;
    }
    for (; l < k; ++l)
        z += texelFetch(X, ivec2(c, l), 0).r * texelFetch(S, ivec2(l / 4, k4 + 1), 0)[l % 4];
    return z;
}

float u1_squares() {        // ||u1||^2 over the k4 texels of row k4 + 1 (0 past the k-th)
    float sum = 0.0;
    for (int j = 0; j < k4; ++j) {
        vec4 u = texelFetch(S, ivec2(j, k4 + 1), 0);
        sum += dot(u, u);
    }
    return sum;
}

void main() {
    int c = int(WPOS.x);
    if (c < k) {
        result = xt_u1(c) - row_total(c / 4, chunks)[c % 4];
    } else if (c == k + 2) {
        result = row_total(k4, chunks).g;
    } else {
        float gamma = row_total(k4, chunks).r + u1_squares();
        float beta = gamma / texelFetch(Prev, ivec2(k, 0), 0).r;
        if (!(abs(beta) < 3.0e38)) beta = 0.0;    // 0 / 0 once r is 0: a restart, as saxpy_ratio
        result = c == k ? gamma : beta;
    }
}
