// The dense rows' inner products with every plane of a stack (beyond 002: for
// sparse_dense_part_planes): fragment (p, r) = sum_j R_r(j) x_p(j), R's plane r and X's plane p
// both folded x_width wide, x_plane_rows high; with WEIGHTED sum_j R_r(j) w(j) x_p(j). One
// fragment walks the n entries (a preconditioner's build draws it once a product).
uniform sampler2D R;
uniform sampler2D X;
#ifdef WEIGHTED
uniform sampler2D Weights;
#endif
uniform int n;
uniform int x_width;
uniform int x_plane_rows;
out float result;

void main() {
    int p = int(WPOS.x);
    int r = int(WPOS.y);
    float sum = 0.0;
    for (int j = 0; j < n; ++j) {
        ivec2 t = ivec2(j % x_width, j / x_width);
        float v = texelFetch(R, t + ivec2(0, r * x_plane_rows), 0).r * texelFetch(X, t + ivec2(0, p * x_plane_rows), 0).r;
#ifdef WEIGHTED
        v *= texelFetch(Weights, t, 0).r;
#endif
        sum += v;
    }
    result = sum;
}
