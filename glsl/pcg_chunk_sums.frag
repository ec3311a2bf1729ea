// The partial sums of PCG's inner products after the forward half of P^-1 (beyond 002: every
// sum an iteration needs there in one pass, then one pass of totals, instead of a reduction
// each), RGBA. Fragment (j, c) adds the entries of chunk j (entries j L .. j L + L - 1 of the m) of
//     row c < k4:   F_4c+l(i) w_i, l = 0 .. 3   (g = F^T w, 002 (7)'s backward half; four
//                                               planes of F a texel)
//     row k4:       (w_i (r_i - phi_i), r_i^2)  (r^T z without z's pivoted part; ||r||^2)
// and, on row k4 + 1, for j < k4: u1_i = (C^-1 r_K)_i, i = 4j .. 4j + 3 (002 (7)'s u1, X = C^-1
// the k x k lower factor's inverse; r_K four a texel in texels 2 .. of the scalars; 0 past the
// k-th), whose squares pcg_chunk_totals adds to r^T z: r_K^T G11^-1 r_K = ||u1||^2, a sum of
// squares, never negative in float32 (as r_K^T H r_K with H = G11^-1 formed is, once G11's
// condition nears 1 / float32's epsilon).
// Each loop issues the fetches of several entries (GROUP; X's four a pivots' texel) before it
// adds them, in the entries' order (a fetch waits for memory; a group in flight waits about as
// long as one; the sums are those of the loop one entry at a time).
uniform sampler2D W;        // (w, r - phi, 0, 0) an entry: pcg_update_forward
uniform sampler2D F;        // RGBA planes of F, as pcg_update_forward's
uniform sampler2D XR;       // (x hi, x lo, r, 0): r the residual whose P^-1 r W holds
uniform sampler2D X;        // C^-1, k x k: X(i, l) at texel (l, i)
uniform sampler2D Sc;       // the scalars, r_K from texel 2 on
uniform int k;
uniform int k4;
uniform int plane_rows;
uniform int width;
uniform int length;         // m
uniform int chunk;          // L
out vec4 result;

const int GROUP = 4;        // entries whose fetches are in flight together
const int PIVOT_TEXELS = 4; // pivots' texels (four entries each) whose fetches are in flight together

vec4 x_column(int l, ivec4 rows) {      // X(rows, l)
    return vec4(texelFetch(X, ivec2(l, rows.x), 0).r, texelFetch(X, ivec2(l, rows.y), 0).r,
                texelFetch(X, ivec2(l, rows.z), 0).r, texelFetch(X, ivec2(l, rows.w), 0).r);
}

vec4 u1(int first) {        // (C^-1 r_K)_i for i = first .. first + 3, 0 past the k-th
    ivec4 rows = min(ivec4(first) + ivec4(0, 1, 2, 3), ivec4(k - 1));
    vec4 u = vec4(0.0);
    int l = 0;
    for (; l + 4 * PIVOT_TEXELS <= k; l += 4 * PIVOT_TEXELS) {   // PIVOT_TEXELS of r_K, their columns in flight
        vec4 r[PIVOT_TEXELS], x[4 * PIVOT_TEXELS];
        for (int g = 0; g < PIVOT_TEXELS; ++g)
            r[g] = texelFetch(Sc, ivec2(2 + l / 4 + g, 0), 0);
        for (int g = 0; g < 4 * PIVOT_TEXELS; ++g)
            x[g] = x_column(l + g, rows);
        for (int g = 0; g < 4 * PIVOT_TEXELS; ++g)
            u += x[g] * r[g / 4][g % 4];
    }
    for (; l + 4 <= k; l += 4) {
        vec4 r = texelFetch(Sc, ivec2(2 + l / 4, 0), 0);
        vec4 x0 = x_column(l, rows), x1 = x_column(l + 1, rows), x2 = x_column(l + 2, rows), x3 = x_column(l + 3, rows);
        u += x0 * r.x;
        u += x1 * r.y;
        u += x2 * r.z;
        u += x3 * r.w;
    }
    for (; l < k; ++l)
        u += x_column(l, rows) * texelFetch(Sc, ivec2(2 + l / 4, 0), 0)[l % 4];
    return mix(vec4(0.0), u, lessThan(ivec4(first) + ivec4(0, 1, 2, 3), ivec4(k)));
}

ivec2 entry(int i) {
    return ivec2(i % width, i / width);
}

vec4 terms(int i, int c) {  // entry i's terms of row c (c <= k4)
    ivec2 t = entry(i);
    vec4 w = texelFetch(W, t, 0);
    if (c < k4)
        return texelFetch(F, ivec2(t.x, t.y + c * plane_rows), 0) * w.r;
    float r = texelFetch(XR, t, 0).b;
    return vec4(w.r * w.g, r * r, 0.0, 0.0);
}

void main() {
    int j = int(WPOS.x);
    int c = int(WPOS.y);
    vec4 sum = vec4(0.0);
    if (c == k4 + 1) {
        if (j < k4)
            sum = u1(4 * j);
    } else {
        int last = min(j * chunk + chunk, length);
        int i = j * chunk;
        for (; i + GROUP <= last; i += GROUP) {
            vec4 part[GROUP];
            for (int g = 0; g < GROUP; ++g)
                part[g] = terms(i + g, c);
            for (int g = 0; g < GROUP; ++g)
                sum += part[g];
        }
        for (; i < last; ++i)
            sum += terms(i, c);
    }
    result = sum;
}
