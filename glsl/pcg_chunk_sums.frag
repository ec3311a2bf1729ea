// The partial sums of PCG's inner products after the forward half of P^-1 (beyond 002: every
// sum an iteration needs there in one pass, then one pass of totals, instead of a reduction
// each). Fragment (j, c) adds the entries of chunk j (entries j L .. j L + L - 1 of the m) of
//     row c < k:   F_c(i) w_i               (g = F^T w, paper 002 (7)'s backward half)
//     row k:       w_i (r_i - phi_i)        (r^T z without z's pivoted part)
//     row k + 1:   r_i^2                    (||r||^2, the stopping test)
// and, on row k + 2, for j < k: r(K_j) (H r_K)_j (r_K^T H r_K, H = G11^-1, a k x k texture).
uniform sampler2D W;        // (w, r - phi, 0, 0) an entry: pcg_schur_forward
uniform sampler2D F;
uniform sampler2D XR;
uniform sampler2D H;
uniform sampler2D Kpos;
uniform int k;
uniform int plane_rows;
uniform int width;
uniform int length;         // m
uniform int chunk;          // L
out float result;

float r_at(int e) {
    return texelFetch(XR, ivec2(e % width, e / width), 0).b;
}

void main() {
    int j = int(WPOS.x);
    int c = int(WPOS.y);
    float sum = 0.0;
    if (c == k + 2) {
        if (j < k) {
            float hr = 0.0;
            for (int l = 0; l < k; ++l)
                hr += texelFetch(H, ivec2(l, j), 0).r * r_at(int(texelFetch(Kpos, ivec2(l, 0), 0).r));
            sum = r_at(int(texelFetch(Kpos, ivec2(j, 0), 0).r)) * hr;
        }
    } else {
        int last = min(j * chunk + chunk, length);
        for (int i = j * chunk; i < last; ++i) {
            ivec2 t = ivec2(i % width, i / width);
            if (c < k)
                sum += texelFetch(F, ivec2(t.x, t.y + c * plane_rows), 0).r * texelFetch(W, t, 0).r;
            else if (c == k)
                sum += texelFetch(W, t, 0).r * texelFetch(W, t, 0).g;
            else {
                float r = texelFetch(XR, t, 0).b;
                sum += r * r;
            }
        }
    }
    result = sum;
}
