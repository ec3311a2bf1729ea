// Beyond the papers: y = X v or y = Xᵀ v for a lower triangular X (the factor's inverse L^-1 of
// gpgpu.cholesky.factor_with_inverse) in one pass: paper 000's singlepass inner-product sgemv
// (matrix_vector_inner_product.frag) over the triangle only,
//     y_i = sum_{j <= i} X(i, j) v_j,    or, transposed,    y_i = sum_{j >= i} X(j, i) v_j,
// each fragment one entry of y. X(i, j) at texel (j, i); v_j at texel (j, 0).
uniform sampler2D X;
uniform sampler2D V;
uniform int m;
uniform bool transposed;
out float result;

void main() {
    int i = int(WPOS.x);
    float sum = 0.0;
    if (transposed) {
        for (int j = i; j < m; j++)
            sum += texelFetch(X, ivec2(i, j), 0).r * texelFetch(V, ivec2(j, 0), 0).r;
    } else {
        for (int j = 0; j <= i; j++)
            sum += texelFetch(X, ivec2(j, i), 0).r * texelFetch(V, ivec2(j, 0), 0).r;
    }
    result = sum;
}
