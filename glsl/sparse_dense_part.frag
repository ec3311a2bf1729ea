// The dense rows and columns of a HYB-like split (paper 002, section 3.2: "extract the dense
// rows to be treated separately"), added to the product S of the sparse part: each dense
// column c contributes C_c(i) x(j_c) (its column stored as a folded plane of C), and a row
// that was dense takes its value V(slot - 1), an inner product computed apart.
// With CHUNKS (beyond 002: the fused PCG iteration's products) V holds the inner products in
// chunks, `chunks` partial sums a dense row in sparse_dense_rows_chunks's table (folded `fold`
// rows high), added here in order; with WEIGHTED the product is A diag(w) x, x(j_c) w(j_c)
// rounded first.
uniform sampler2D S;
uniform sampler2D C;        // dense columns, plane c at rows c * plane_rows ..
uniform sampler2D J;        // 1 x kc: their column indexes
uniform sampler2D V;        // kr x 1: the dense rows' inner products (CHUNKS: their chunks' table)
uniform sampler2D slot;     // folded like y: r + 1 for the r-th dense row, else 0
uniform sampler2D X;
#ifdef WEIGHTED
uniform sampler2D Weights;  // w, folded as X
#endif
uniform int kc;
uniform int plane_rows;
uniform int x_width;
#ifdef CHUNKS
uniform int chunks;
uniform int fold;
#endif
out float result;

void main() {
    float sum = texRECT(S, WPOS);
    for (int c = 0; c < kc; ++c) {
        float j = texRECT(J, vec2(c + 0.5, 0.5));
        float x = texVECTOR(X, j, x_width);
#ifdef WEIGHTED
        x = x * texVECTOR(Weights, j, x_width);
#endif
        sum += texRECT(C, WPOS + vec2(0.0, c * plane_rows)) * x;
    }
    float r = texRECT(slot, WPOS);
    if (r > 0.5) {
#ifdef CHUNKS
        int q = int(r) - 1;
        ivec2 first = ivec2(chunks * (q / fold), q % fold);
        for (int a = 0; a < chunks; ++a)
            sum += texelFetch(V, first + ivec2(a, 0), 0).r;
#else
        sum += texRECT(V, vec2(0.5, r - 0.5));
#endif
    }
    result = sum;
}
