// The Gram matrix of the columns of a k x k M (row i at texture row i): fragment (l, j) =
// sum_c M(c, j) M(c, l), i.e. M^T M. Beyond 002: H = G11^-1 = C^-T C^-1 from X = C^-1, once a
// preconditioner (gpgpu.lp.matrix_free_fused).
uniform sampler2D M;
uniform int k;
out float result;

void main() {
    int l = int(WPOS.x);
    int j = int(WPOS.y);
    float sum = 0.0;
    for (int c = 0; c < k; ++c)
        sum += texelFetch(M, ivec2(j, c), 0).r * texelFetch(M, ivec2(l, c), 0).r;
    result = sum;
}
