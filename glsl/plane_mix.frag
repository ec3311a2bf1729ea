// The planes of a stack P combined by a k x k matrix M (row b at texture row b): plane b of the
// result = sum_j M(b, j) P_j, the planes folded like P's (plane j at rows j plane_rows ..).
// Beyond 002 (gpgpu.lp.matrix_free_fused, once a preconditioner): with X = C^-1, B = G[:, K]
// C^-T (P the columns G e_{K_j}), E (P the unit planes e_{K_j}) and, with H = G11^-1,
// F = G[:, K] G11^-1 (H symmetric).
uniform sampler2D P;
uniform sampler2D M;
uniform int k;
uniform int plane_rows;
out float result;

void main() {
    ivec2 t = ivec2(WPOS);
    int b = t.y / plane_rows;
    int y = t.y - b * plane_rows;
    float sum = 0.0;
    for (int j = 0; j < k; ++j)
        sum += texelFetch(M, ivec2(j, b), 0).r * texelFetch(P, ivec2(t.x, y + j * plane_rows), 0).r;
    result = sum;
}
