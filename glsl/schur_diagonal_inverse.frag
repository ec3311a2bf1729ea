// D_S^-1 of the partial Cholesky preconditioner (paper 002, (7)-(8)): the diagonal of the
// Schur complement S = G22 - L21 D_L L21^T is diag(G)_i - sum_c B_c(i)^2, with B = G21 C^-T
// the planes that the forward substitution left (C = L11 D_L^1/2). Rows of the pivoted block
// (mask 0) get 0: they are handled by the k x k factor. A Schur entry that float32 rounding
// leaves at or below `floor_ratio` times its diagonal entry falls back to the diagonal
// itself, so that P stays positive definite.
uniform sampler2D Gd;
uniform sampler2D B;
uniform sampler2D mask;
uniform int k;
uniform int plane_rows;
uniform float floor_ratio;
out float result;

void main() {
    ivec2 t = ivec2(WPOS);
    float sq = 0.0;
    for (int c = 0; c < k; ++c) {
        float b = texelFetch(B, ivec2(t.x, t.y + c * plane_rows), 0).r;
        sq += b * b;
    }
    float d = texRECT(Gd, WPOS);
    float s = d - sq;
    result = texRECT(mask, WPOS) * (s > floor_ratio * d ? 1.0 / s : 1.0 / d);
}
