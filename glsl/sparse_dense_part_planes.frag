// The dense rows and columns of a HYB-like split (paper 002, section 3.2: "extract the dense
// rows to be treated separately") on every plane of a stack at once (beyond 002: a
// preconditioner's k column products in a few passes where A has a dense part), as
// sparse_dense_part does for one vector. S holds the sparse part's products plane by plane
// (y's planes y_plane_rows rows high); plane c of X is a vector of length n (x_plane_rows
// rows, x_width wide). Each dense column c' adds C_c'(i) X_c(j_c') (times the weight of column
// j_c' with WEIGHTED), and a row that was dense takes the inner product of its row with plane
// c, computed apart in chunks (sparse_dense_rows_chunks: the sums q = r planes + c of dense
// row r, `chunks` a sum, in a table folded `fold` rows high), its chunks added in order.
uniform sampler2D S;
uniform sampler2D C;        // dense columns, plane c' at rows c' * y_plane_rows ..
uniform sampler2D J;        // 1 x kc: their column indexes
uniform sampler2D V;        // the chunks of the dense rows' inner products with the planes
uniform sampler2D slot;     // folded like y: r + 1 for the r-th dense row, else 0
uniform sampler2D X;
#ifdef WEIGHTED
uniform sampler2D Weights;  // a vector of length n (A's columns), folded x_width wide
#endif
uniform int kc;
uniform int x_width;
uniform int x_plane_rows;
uniform int y_plane_rows;
uniform int planes;
uniform int chunks;
uniform int fold;
out float result;

void main() {
    int plane = int(WPOS.y) / y_plane_rows;
    vec2 local = vec2(WPOS.x, WPOS.y - float(plane * y_plane_rows));
    int offset = plane * x_plane_rows;
    float sum = texRECT(S, WPOS);
    for (int c = 0; c < kc; ++c) {
        int j = int(texRECT(J, vec2(c + 0.5, 0.5)));
        float v = texRECT(C, local + vec2(0.0, c * y_plane_rows))
                  * texelFetch(X, ivec2(j % x_width, j / x_width + offset), 0).r;
#ifdef WEIGHTED
        v *= texelFetch(Weights, ivec2(j % x_width, j / x_width), 0).r;
#endif
        sum += v;
    }
    float r = texRECT(slot, local);
    if (r > 0.5) {
        int q = (int(r) - 1) * planes + plane;
        ivec2 first = ivec2(chunks * (q / fold), q % fold);
        for (int a = 0; a < chunks; ++a)
            sum += texelFetch(V, first + ivec2(a, 0), 0).r;
    }
    result = sum;
}
