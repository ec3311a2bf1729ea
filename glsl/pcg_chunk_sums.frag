// The partial sums of PCG's inner products after the forward half of P^-1 (beyond 002: every
// sum an iteration needs there in one pass, then one pass of totals, instead of a reduction
// each), RGBA. Fragment (j, c) adds the entries of chunk j (entries j L .. j L + L - 1 of the m) of
//     row c < k4:   F_4c+l(i) w_i, l = 0 .. 3   (g = F^T w, 002 (7)'s backward half; four
//                                               planes of F a texel)
//     row k4:       (w_i (r_i - phi_i), r_i^2)  (r^T z without z's pivoted part; ||r||^2)
// and, on row k4 + 1, for j < k4: r(K_i) (H r_K)_i, i = 4j .. 4j + 3 (r_K^T H r_K, H = G11^-1
// a k x k texture; r_K four a texel in texels 2 .. of the scalars; 0 past the k-th).
uniform sampler2D W;        // (w, r - phi, 0, 0) an entry: pcg_schur_forward
uniform sampler2D F;        // RGBA planes of F, as pcg_schur_forward's
uniform sampler2D XR;
uniform sampler2D H;
uniform sampler2D Sc;       // the scalars, r_K from texel 2 on
uniform int k;
uniform int k4;
uniform int plane_rows;
uniform int width;
uniform int length;         // m
uniform int chunk;          // L
out vec4 result;

float r_pivot(int l) {      // r(K_l)
    return texelFetch(Sc, ivec2(2 + l / 4, 0), 0)[l % 4];
}

float h_r(int i) {          // (H r_K)_i, 0 past the k-th
    float hr = 0.0;
    if (i < k)
        for (int l = 0; l < k; ++l)
            hr += texelFetch(H, ivec2(l, i), 0).r * r_pivot(l);
    return hr;
}

void main() {
    int j = int(WPOS.x);
    int c = int(WPOS.y);
    vec4 sum = vec4(0.0);
    if (c == k4 + 1) {
        if (j < k4)
            sum = texelFetch(Sc, ivec2(2 + j, 0), 0) * vec4(h_r(4 * j), h_r(4 * j + 1), h_r(4 * j + 2), h_r(4 * j + 3));
    } else {
        int last = min(j * chunk + chunk, length);
        for (int i = j * chunk; i < last; ++i) {
            ivec2 t = ivec2(i % width, i / width);
            vec4 w = texelFetch(W, t, 0);
            if (c < k4)
                sum += texelFetch(F, ivec2(t.x, t.y + c * plane_rows), 0) * w.r;
            else {
                float r = texelFetch(XR, t, 0).b;
                sum.rg += vec2(w.r * w.g, r * r);
            }
        }
    }
    result = sum;
}
