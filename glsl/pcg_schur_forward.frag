// The forward half of the partial Cholesky preconditioner of paper 002, (7)-(8), in one pass
// (beyond 002: its two passes u1 = C^-1 r1 and D_S^-1 (r - B u1) merged): with F = B C^-1 =
// G[:, K] G11^-1 (k planes of the stack F, made once a preconditioner), B u1 = F r_K, so
//     w = D_S^-1 (r - phi),  phi = sum_j F_j r(K_j),
// read from r at the k pivoted entries K_j (Kpos) and from F. D_S^-1 is 0 at K, so w is too.
// The fragment also keeps r - phi (.g): PCG's r^T z is sum_i w_i (r_i - phi_i) + r_K^T H r_K.
// r is PCG's residual, the .b of its state texel (x hi, x lo, r, 0).
uniform sampler2D XR;       // PCG's state: (x hi, x lo, r, 0) an entry
uniform sampler2D F;        // the k planes of G[:, K] G11^-1, plane j at rows j plane_rows ..
uniform sampler2D Kpos;     // the entry numbers K_j (1 x k)
uniform sampler2D Dinv;     // D_S^-1, 0 at K
uniform int k;
uniform int plane_rows;
uniform int width;          // row width of the folded vectors
out vec4 result;

void main() {
    ivec2 t = ivec2(WPOS);
    float phi = 0.0;
    for (int j = 0; j < k; ++j) {
        int e = int(texelFetch(Kpos, ivec2(j, 0), 0).r);
        float rK = texelFetch(XR, ivec2(e % width, e / width), 0).b;
        phi += texelFetch(F, ivec2(t.x, t.y + j * plane_rows), 0).r * rK;
    }
    float rest = texelFetch(XR, t, 0).b - phi;
    result = vec4(texelFetch(Dinv, t, 0).r * rest, rest, 0.0, 0.0);
}
