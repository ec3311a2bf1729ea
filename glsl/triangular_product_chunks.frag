// Beyond the papers: the first of two passes of y = X v or y = Xᵀ v for a lower triangular X
// (the factor's inverse L^-1 of gpgpu.cholesky.factor_with_inverse): paper 000's singlepass
// inner-product sgemv (matrix_vector_inner_product.frag) over the triangle only, each inner
// product cut into chunks of CHUNK terms so that m x ceil(m / CHUNK) fragments share it, not m.
// Fragment (i, c) of the partial sums:
//     P(c, i) = sum over j in chunk c, j <= i, of X(i, j) v_j,   or, transposed,
//     P(c, i) = sum over j in chunk c, j >= i, of X(j, i) v_j;
// column_sums then adds each column of P (y_i = sum over c of P(c, i)). X(i, j) at texel (j, i),
// v_j at texel (j, 0).
uniform sampler2D X;
uniform sampler2D V;
uniform int m;
uniform bool transposed;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (i, c)
    int i = t.x;
    int j0 = t.y * CHUNK;
    int j1 = min(j0 + CHUNK, m);
    float sum = 0.0;
    if (transposed) {
        for (int j = max(j0, i); j < j1; j++)
            sum += texelFetch(X, ivec2(i, j), 0).r * texelFetch(V, ivec2(j, 0), 0).r;
    } else {
        for (int j = j0; j < min(j1, i + 1); j++)
            sum += texelFetch(X, ivec2(j, i), 0).r * texelFetch(V, ivec2(j, 0), 0).r;
    }
    result = sum;
}
