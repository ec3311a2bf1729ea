// The dense rows and columns of a HYB-like split (paper 002, section 3.2: "extract the dense
// rows to be treated separately"), added to the product S of the sparse part: each dense
// column c contributes C_c(i) x(j_c) (its column stored as a folded plane of C), and a row
// that was dense takes its value V(slot - 1), an inner product computed apart.
// The fused PCG iteration's products add the same in the sparse part's own pass
// (sparse_ellpack_four with DENSE, the dense rows' inner products in chunks).
uniform sampler2D S;
uniform sampler2D C;        // dense columns, plane c at rows c * plane_rows ..
uniform sampler2D J;        // 1 x kc: their column indexes
uniform sampler2D V;        // kr x 1: the dense rows' inner products
uniform sampler2D slot;     // folded like y: r + 1 for the r-th dense row, else 0
uniform sampler2D X;
uniform int kc;
uniform int plane_rows;
uniform int x_width;
out float result;

void main() {
    float sum = texRECT(S, WPOS);
    for (int c = 0; c < kc; ++c) {
        float j = texRECT(J, vec2(c + 0.5, 0.5));
        sum += texRECT(C, WPOS + vec2(0.0, c * plane_rows)) * texVECTOR(X, j, x_width);
    }
    float r = texRECT(slot, WPOS);
    if (r > 0.5)
        sum += texRECT(V, vec2(0.5, r - 0.5));
    result = sum;
}
