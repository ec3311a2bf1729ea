// sparse_dense_part on every plane of a stack at once (beyond 002: a preconditioner's k column
// products in a few passes, gpgpu.sparse.SparseStream.product_planes): plane p of the result is
// the sparse part's plane S_p plus each dense column's C_c x_p(j_c), and a dense row's entry
// takes its inner product with plane p, V's texel (p, r) (sparse_dense_rows_planes). With
// WEIGHTED the product is A diag(w) X: each dense column's term times w(j_c) (the dense rows'
// inner products were weighted where they were made).
uniform sampler2D S;        // the sparse part's planes (sparse_ellpack_planes)
uniform sampler2D C;        // dense columns, plane c at rows c * y_plane_rows ..
uniform sampler2D J;        // 1 x kc: their column indexes
uniform sampler2D V;        // planes x kr: the dense rows' inner products with each plane
uniform sampler2D slot;     // folded like y: r + 1 for the r-th dense row, else 0
uniform sampler2D X;        // the input planes, each folded x_width wide, x_plane_rows high
#ifdef WEIGHTED
uniform sampler2D Weights;  // a vector of length n, folded x_width wide
#endif
uniform int kc;
uniform int y_plane_rows;
uniform int x_width;
uniform int x_plane_rows;
out float result;

void main() {
    ivec2 t = ivec2(WPOS);
    int p = t.y / y_plane_rows;
    int r = t.y - p * y_plane_rows;
    float sum = texelFetch(S, t, 0).r;
    for (int c = 0; c < kc; ++c) {
        int j = int(texelFetch(J, ivec2(c, 0), 0).r);
        ivec2 xj = ivec2(j % x_width, j / x_width);
        float v = texelFetch(C, ivec2(t.x, r + c * y_plane_rows), 0).r
                * texelFetch(X, xj + ivec2(0, p * x_plane_rows), 0).r;
#ifdef WEIGHTED
        v *= texelFetch(Weights, xj, 0).r;
#endif
        sum += v;
    }
    float s = texelFetch(slot, ivec2(t.x, r), 0).r;
    if (s > 0.5) sum += texelFetch(V, ivec2(p, int(s) - 1), 0).r;
    result = sum;
}
