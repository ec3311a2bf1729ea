// The dense rows' inner products with x of a HYB-like split (paper 002 section 3.2: "extract
// the dense rows to be treated separately"), in chunks (beyond 002: the dense rows in one pass
// a product, whatever their number, for the fused PCG iteration and for every plane of a stack):
// the sum for dense row r, plane c of X and chunk a adds the terms R_r(j) X_c(j) of the
// entries j = a L .. min(a L + L, n) - 1 in order, their fetches issued GROUP at a time
// (X_c(j) w(j) rounded first with WEIGHTED). The sums q = r planes + c lie in a table folded
// `fold` rows high: sum (q, a) at texel (a + chunks (q / fold), q % fold); past the last q
// the table holds 0. sparse_ellpack_four and sparse_ellpack_planes with DENSE add a row's
// chunks. Dense row r is a plane of R and plane c of X a plane, both folded like x
// (x_plane_rows rows, x_width wide); one vector x is X with planes = 1.
uniform sampler2D R;        // the dense rows, one folded plane each
uniform sampler2D X;        // planes of length n, folded x_width wide
#ifdef WEIGHTED
uniform sampler2D Weights;  // w, folded as a plane of X
#endif
uniform int n;
uniform int chunk;          // L
uniform int chunks;
uniform int kr;
uniform int planes;
uniform int fold;
uniform int x_width;
uniform int x_plane_rows;
out float result;

const int GROUP = 4;        // entries whose fetches are in flight together

float gathered(ivec2 t, int plane) {   // X_c(j) (times w(j)) at the entry's texel
    float x = texelFetch(X, t + ivec2(0, plane * x_plane_rows), 0).r;
#ifdef WEIGHTED
    x = x * texelFetch(Weights, t, 0).r;
#endif
    return x;
}

void main() {
    int a = int(WPOS.x) % chunks;
    int q = (int(WPOS.x) / chunks) * fold + int(WPOS.y);
    int plane = q % planes;
    int offset = (q / planes) * x_plane_rows;      // dense row q / planes
    int first = a * chunk;
    int last = q < kr * planes ? min(first + chunk, n) : first;
    float sum = 0.0;
    int j = first;
    for (; j + GROUP <= last; j += GROUP) {
        float v[GROUP], x[GROUP];
        for (int g = 0; g < GROUP; ++g) {
            ivec2 t = ivec2((j + g) % x_width, (j + g) / x_width);
            v[g] = texelFetch(R, t + ivec2(0, offset), 0).r;
            x[g] = gathered(t, plane);
        }
        for (int g = 0; g < GROUP; ++g)
            sum += v[g] * x[g];
    }
    for (; j < last; ++j) {
        ivec2 t = ivec2(j % x_width, j / x_width);
        sum += texelFetch(R, t + ivec2(0, offset), 0).r * gathered(t, plane);
    }
    result = sum;
}
