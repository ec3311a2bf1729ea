// FSAX of paper 002 section 3.2 (ELLPACK, one fragment a row) on every plane of a stack at once
// (beyond 002: the k products of a preconditioner build in one pass). Plane c of the result is
// A times plane c of X, each plane folded like a vector (y's planes y_plane_rows rows high, X's
// x_plane_rows). The fragment finds its plane and its row i = r W + x of A from its window
// position (one rectangle over the stack, so T0 cannot be interpolated plane by plane as
// sparse_ellpack's is) and walks the row's K entries from texel (r K, x), as sparse_ellpack.
// With WEIGHTED each entry is also scaled by the weight of its column: (A Theta) X. The loop
// stops at a padding texel (column -1), as sparse_ellpack's.
//
// With DENSE (a dense part split off A, paper 002 section 3.2's dense rows) the pass also adds
// it to each plane's row, after the row's entries: each dense column c' adds C_c'(i) X_c(j_c')
// (times the weight of column j_c' with WEIGHTED), and a row that was dense takes the inner
// product of its row with plane c, computed apart in chunks (sparse_dense_rows_chunks: the sums
// q = r planes + c of dense row r, `chunks` a sum, in a table folded `fold` rows high), its
// chunks added in order.
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
#ifdef DENSE
uniform sampler2D C;        // dense columns, plane c' at rows c' * y_plane_rows ..
uniform sampler2D J;        // 1 x kc: their column indexes
uniform sampler2D V;        // the chunks of the dense rows' inner products with the planes
uniform sampler2D slot;     // folded like y: r + 1 for the r-th dense row, else 0
uniform int kc;
uniform int planes;
uniform int chunks;
uniform int fold;
#endif
out float result;

float term(float value, int col, int offset) {     // a(i, col) X_c(col) (times w(col))
    float v = value * texelFetch(X, ivec2(col % x_width, col / x_width + offset), 0).r;
#ifdef WEIGHTED
    v *= texelFetch(Weights, ivec2(col % x_width, col / x_width), 0).r;
#endif
    return v;
}

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
        sum += term(texelFetch(values, entry, 0).r, col, offset);
    }
#ifdef DENSE
    ivec2 local = ivec2(x, r);
    for (int c = 0; c < kc; ++c)
        sum += term(texelFetch(C, local + ivec2(0, c * y_plane_rows), 0).r, int(texelFetch(J, ivec2(c, 0), 0).r),
                    offset);
    float d = texelFetch(slot, local, 0).r;
    if (d > 0.5) {
        int q = (int(d) - 1) * planes + plane;
        ivec2 first = ivec2(chunks * (q / fold), q % fold);
        for (int a = 0; a < chunks; ++a)
            sum += texelFetch(V, first + ivec2(a, 0), 0).r;
    }
#endif
    result = sum;
}
