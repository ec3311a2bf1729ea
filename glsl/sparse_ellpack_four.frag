// FSAX, y = A x, with A in ELLPACK as sparse_ellpack (paper 002 section 3.2, one fragment a
// row, T0 at the row's first entry), its fetches issued GROUP entries at a time (beyond 002:
// for the fused PCG iteration): the group's column indexes, then its values and the x's they
// name, then its terms added in the entries' order, the sum of sparse_ellpack's loop. A fetch
// waits for memory and a gather waits for its index, so a row of K entries waits about
// 2 K / GROUP times instead of 2 K. Padding (column -1, value 0) adds 0 x 0; the loop stops
// after the first group that holds padding. With WEIGHTED, y = A diag(w) x with x_j w_j
// rounded first: the float32 values of a scaling pass (elementwise_product) and the product.
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
#ifdef WEIGHTED
uniform sampler2D Weights;  // w, folded as X
#endif
uniform int K;             // entries per row (padding included)
uniform int x_width;       // row width of the folded x
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

void main() {
    ivec2 first = ivec2(floor(T0.xy));
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
    result = sum;
}
