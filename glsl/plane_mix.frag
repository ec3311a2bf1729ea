// The planes of a stack P combined by a k x k matrix M (row b at texture row b): plane b of the
// result = sum_j M(b, j) P_j, the planes folded like P's (plane j at rows j plane_rows ..).
// Beyond 002 (gpgpu.lp.matrix_free_fused, once a preconditioner): with X = C^-1, B = G[:, K]
// C^-T (P the columns G e_{K_j}) and E (P the unit planes e_{K_j}). With FOUR the result is
// RGBA: plane b of it holds the planes 4b .. 4b + 3 of the combination in its four components
// (0 past the k-th), so that a pass reading all k planes fetches k / 4 texels; with FOUR and
// TRANSPOSED the weights are M's columns, plane b = sum_j M(j, b) P_j: F = B X = G[:, K] C^-T
// C^-1 = G[:, K] G11^-1 from B's planes (for pcg_update_forward and pcg_chunk_sums), each
// product rounded once from B and X, G11^-1 never formed (G11^-1 = X^T X rounded to float32
// is off by about epsilon ||X||^2, which swamps r_K^T G11^-1 r_K once G11's condition nears
// 1 / epsilon).
uniform sampler2D P;
uniform sampler2D M;
uniform int k;
uniform int plane_rows;
#ifdef FOUR
out vec4 result;

float weight(int row, int j) {      // M(row, j) (TRANSPOSED: M(j, row)), 0 past the k-th row
#ifdef TRANSPOSED
    return row < k ? texelFetch(M, ivec2(row, j), 0).r : 0.0;
#else
    return row < k ? texelFetch(M, ivec2(j, row), 0).r : 0.0;
#endif
}
#else
out float result;
#endif

void main() {
    ivec2 t = ivec2(WPOS);
    int b = t.y / plane_rows;
    int y = t.y - b * plane_rows;
#ifdef FOUR
    vec4 sum = vec4(0.0);
    for (int j = 0; j < k; ++j) {
        vec4 m = vec4(weight(4 * b, j), weight(4 * b + 1, j), weight(4 * b + 2, j), weight(4 * b + 3, j));
        sum += m * texelFetch(P, ivec2(t.x, y + j * plane_rows), 0).r;
    }
#else
    float sum = 0.0;
    for (int j = 0; j < k; ++j)
        sum += texelFetch(M, ivec2(j, b), 0).r * texelFetch(P, ivec2(t.x, y + j * plane_rows), 0).r;
#endif
    result = sum;
}
