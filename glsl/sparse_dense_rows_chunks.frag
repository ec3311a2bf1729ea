// The dense rows' inner products with x of a HYB-like split (paper 002 section 3.2: "extract
// the dense rows to be treated separately"), in chunks (beyond 002: the fused PCG iteration's
// products, two passes for the whole dense part): fragment (a, r) adds the terms R_r(j) x(j)
// of chunk a, the entries j = a L .. min(a L + L, n) - 1 in order, their fetches issued GROUP
// at a time (x(j) w(j) rounded first with WEIGHTED); sparse_dense_part with CHUNKS adds a
// row's chunks. Dense row r is a plane of R folded like x (x_plane_rows rows, x_width wide)
// at texture rows r x_plane_rows ..
uniform sampler2D R;        // the dense rows, one folded plane each
uniform sampler2D X;        // x, length n, folded x_width wide
#ifdef WEIGHTED
uniform sampler2D Weights;  // w, folded as X
#endif
uniform int n;
uniform int chunk;          // L
uniform int x_width;
uniform int x_plane_rows;
out float result;

const int GROUP = 4;        // entries whose fetches are in flight together

float gathered(ivec2 t) {   // x(j) (times w(j)) at the entry's texel
    float x = texelFetch(X, t, 0).r;
#ifdef WEIGHTED
    x = x * texelFetch(Weights, t, 0).r;
#endif
    return x;
}

void main() {
    int first = int(WPOS.x) * chunk;
    int last = min(first + chunk, n);
    int offset = int(WPOS.y) * x_plane_rows;
    float sum = 0.0;
    int j = first;
    for (; j + GROUP <= last; j += GROUP) {
        float a[GROUP], x[GROUP];
        for (int g = 0; g < GROUP; ++g) {
            ivec2 t = ivec2((j + g) % x_width, (j + g) / x_width);
            a[g] = texelFetch(R, t + ivec2(0, offset), 0).r;
            x[g] = gathered(t);
        }
        for (int g = 0; g < GROUP; ++g)
            sum += a[g] * x[g];
    }
    for (; j < last; ++j) {
        ivec2 t = ivec2(j % x_width, j / x_width);
        sum += texelFetch(R, t + ivec2(0, offset), 0).r * gathered(t);
    }
    result = sum;
}
