// FSAX of paper 002 section 3.2 (ELLPACK, one fragment a row) on every plane of a stack at once
// (beyond 002: the k products of a preconditioner build in one pass). Plane c of the result is
// A times plane c of X, each plane folded like a vector (y's planes y_plane_rows rows high, X's
// x_plane_rows). The fragment finds its plane and its row i = r W + x of A from its window
// position (one rectangle over the stack, so T0 cannot be interpolated plane by plane as
// sparse_ellpack's is) and walks the row's K entries from texel (r K, x), as sparse_ellpack.
// With WEIGHTED each entry is also scaled by the weight of its column: (A Theta) X. The loop
// stops at a padding texel (column -1), as sparse_ellpack's.
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
#ifdef WEIGHTED
uniform sampler2D Weights;  // a vector of length n (A's columns), folded x_width wide
#endif
uniform int K;
uniform int x_width;
uniform int x_plane_rows;
uniform int y_plane_rows;
out float result;

void main() {
    int x = int(WPOS.x);
    int plane = int(WPOS.y) / y_plane_rows;
    int r = int(WPOS.y) - plane * y_plane_rows;
    int offset = plane * x_plane_rows;
    float sum = 0.0;
    for (int k = 0; k < K; ++k) {
        ivec2 entry = ivec2(r * K + k, x);
        int col = int(texelFetch(columns, entry, 0).r);
        if (col < 0)
            break;
        float v = texelFetch(values, entry, 0).r * texelFetch(X, ivec2(col % x_width, col / x_width + offset), 0).r;
#ifdef WEIGHTED
        v *= texelFetch(Weights, ivec2(col % x_width, col / x_width), 0).r;
#endif
        sum += v;
    }
    result = sum;
}
