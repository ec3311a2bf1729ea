// FSAX, y = A x, with A in ELLPACK as sparse_ellpack (paper 002 section 3.2, one fragment a
// row, T0 at the row's first entry), its fetches issued GROUP entries at a time (beyond 002:
// for the fused PCG iteration): the group's column indexes, then its values and the x's they
// name, then its terms added in the entries' order, the sum of sparse_ellpack's loop. A fetch
// waits for memory and a gather waits for its index, so a row of K entries waits about
// 2 K / GROUP times instead of 2 K. Padding (column -1, value 0) adds 0 x 0; the loop stops
// after the first group that holds padding. With WEIGHTED, y = A diag(w) x with x_j w_j
// rounded first: the float32 values of a scaling pass (elementwise_product) and the product.
//
// With CURVATURE (the fused PCG iteration, x = u = A^T p and w = theta): the pass also draws,
// in rows_y and after, the partial sums of p^T G_R p = sum_j theta_j u_j^2 + delta ||p||^2
// (paper 002 (6), G_R = A Theta~ A^T + delta I) that pcg_step_scalars adds up: sum a of the
// rows below y (a = (row - rows_y) sums_width + column) is theta u^2 over chunk a of the n
// entries for a < n_chunks, p^2 over chunk a - m_first of the m for m_first <= a < m_first +
// m_chunks. The product's fragments then find their row from the window position (row
// r sums_width + x of A at texel (r K, x)). rows_y = 0 draws the sums alone (formats other
// than ELLPACK). Each sum's loop issues GROUP entries' fetches before it adds them, in order.
//
// With DENSE (beyond 002: the fused PCG iteration's products where A has a dense part) the
// pass also adds the dense part to the row's sum, as sparse_dense_part adds it to the sparse
// part's y: each dense column c's C_c(i) x(j_c) (x(j_c) w(j_c) with WEIGHTED), then, in a row
// that was dense (slot > 0), its inner product's chunks in order, drawn before this pass by
// sparse_dense_rows_chunks. One pass instead of the sparse part's and a dense part's.
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
#ifdef WEIGHTED
uniform sampler2D Weights;  // w, folded as X
#endif
uniform int K;             // entries per row (padding included)
uniform int x_width;       // row width of the folded x
#ifdef CURVATURE
uniform sampler2D Theta;    // theta, folded as X (u)
uniform sampler2D P;        // p, m entries folded m_width wide
uniform int rows_y;         // rows of y above the sums (0: the sums alone)
uniform int sums_width;     // texels a row of y and of the sums
uniform int m_first;        // the index a of the first of the m part's sums
uniform int n;
uniform int n_chunk;
uniform int n_chunks;
uniform int m;
uniform int m_width;
uniform int m_chunk;
uniform int m_chunks;
#endif
#ifdef DENSE
uniform sampler2D C;        // dense columns, plane c at rows c * plane_rows ..
uniform sampler2D J;        // 1 x kc: their column indexes
uniform sampler2D V;        // the dense rows' chunks (sparse_dense_rows_chunks's table)
uniform sampler2D slot;     // folded like y: r + 1 for the r-th dense row, else 0
uniform int kc;
uniform int plane_rows;
uniform int chunks;
uniform int fold;
#endif
out float result;

const int GROUP = 4;        // entries whose fetches are in flight together

float gathered(float column) {      // x (times w) at the column; 0 for padding
    int j = max(int(column), 0);
    ivec2 t = ivec2(j % x_width, j / x_width);
    float x = texelFetch(X, t, 0).r;
#ifdef WEIGHTED
    x = x * texelFetch(Weights, t, 0).r;
#endif
    return column < 0.0 ? 0.0 : x;
}

float row_sum(ivec2 first) {        // the row whose K entries start at texel first
    float sum = 0.0;
    int k = 0;
    for (; k + GROUP <= K; k += GROUP) {
        float c[GROUP], v[GROUP], x[GROUP];
        for (int g = 0; g < GROUP; ++g) {
            c[g] = texelFetch(columns, first + ivec2(k + g, 0), 0).r;
            v[g] = texelFetch(values, first + ivec2(k + g, 0), 0).r;
        }
        for (int g = 0; g < GROUP; ++g)
            x[g] = gathered(c[g]);
        for (int g = 0; g < GROUP; ++g)
            sum += v[g] * x[g];
        if (c[GROUP - 1] < 0.0) {   // the row ended in this group
            k = K;
            break;
        }
    }
    for (; k < K; ++k) {
        ivec2 e = first + ivec2(k, 0);
        float column = texelFetch(columns, e, 0).r;
        if (column < 0.0)
            break;
        sum += texelFetch(values, e, 0).r * gathered(column);
    }
    return sum;
}

#ifdef DENSE
float with_dense_part(float sum, ivec2 y) {     // y: the row's texel of the folded y
    for (int c = 0; c < kc; ++c)
        sum += texelFetch(C, y + ivec2(0, c * plane_rows), 0).r * gathered(texelFetch(J, ivec2(c, 0), 0).r);
    float r = texelFetch(slot, y, 0).r;
    if (r > 0.5) {
        int q = int(r) - 1;
        ivec2 first = ivec2(chunks * (q / fold), q % fold);
        for (int a = 0; a < chunks; ++a)
            sum += texelFetch(V, first + ivec2(a, 0), 0).r;
    }
    return sum;
}
#else
float with_dense_part(float sum, ivec2 y) {
    return sum;
}
#endif

#ifdef CURVATURE
float curvature(int i) {    // theta_i u_i^2
    ivec2 t = ivec2(i % x_width, i / x_width);
    float u = texelFetch(X, t, 0).r;
    return texelFetch(Theta, t, 0).r * u * u;
}

float square(int i) {       // p_i^2
    float p = texelFetch(P, ivec2(i % m_width, i / m_width), 0).r;
    return p * p;
}

float curvature_chunk(int j) {
    float sum = 0.0;
    int last = min(j * n_chunk + n_chunk, n);
    int i = j * n_chunk;
    for (; i + GROUP <= last; i += GROUP) {
        float part[GROUP];
        for (int g = 0; g < GROUP; ++g)
            part[g] = curvature(i + g);
        for (int g = 0; g < GROUP; ++g)
            sum += part[g];
    }
    for (; i < last; ++i)
        sum += curvature(i);
    return sum;
}

float square_chunk(int j) {
    float sum = 0.0;
    int last = min(j * m_chunk + m_chunk, m);
    int i = j * m_chunk;
    for (; i + GROUP <= last; i += GROUP) {
        float part[GROUP];
        for (int g = 0; g < GROUP; ++g)
            part[g] = square(i + g);
        for (int g = 0; g < GROUP; ++g)
            sum += part[g];
    }
    for (; i < last; ++i)
        sum += square(i);
    return sum;
}
#endif

void main() {
#ifdef CURVATURE
    int x = int(WPOS.x);
    int row = int(WPOS.y);
    if (row < rows_y) {
        result = with_dense_part(row_sum(ivec2(row * K, x)), ivec2(x, row));
        return;
    }
    int a = (row - rows_y) * sums_width + x;
    if (a < n_chunks)
        result = curvature_chunk(a);
    else if (a >= m_first && a < m_first + m_chunks)
        result = square_chunk(a - m_first);
    else
        result = 0.0;
#else
    result = with_dense_part(row_sum(ivec2(floor(T0.xy))), ivec2(WPOS.xy));
#endif
}
