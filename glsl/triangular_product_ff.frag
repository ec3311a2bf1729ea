// Beyond the papers: y = X v or y = Xᵀ v for a lower triangular X (the factor's inverse L^-1 of
// gpgpu.float_float.factor_with_inverse) in float-float arithmetic (float_float.glsl): paper
// 000's singlepass inner-product sgemv (matrix_vector_inner_product.frag) over the triangle only,
//     y_i = sum_{j <= i} X(i, j) v_j,    or, transposed,    y_i = sum_{j >= i} X(j, i) v_j,
// each fragment one entry of y. X(i, j) at texel (j, i); v_j at texel (j, 0); hi in .r, lo in .g.
// L Lᵀ z = r is z = Xᵀ (X r): two such passes, where the substitutions take 2m.
uniform sampler2D X;
uniform sampler2D V;
uniform int m;
uniform bool transposed;
out vec4 result;

void main() {
    int i = int(WPOS.x);
    vec2 sum = vec2(0.0);
    if (transposed) {
        for (int j = i; j < m; j++)
            sum = ff_add(sum, ff_mul(texelFetch(X, ivec2(i, j), 0).rg, texelFetch(V, ivec2(j, 0), 0).rg));
    } else {
        for (int j = 0; j <= i; j++)
            sum = ff_add(sum, ff_mul(texelFetch(X, ivec2(j, i), 0).rg, texelFetch(V, ivec2(j, 0), 0).rg));
    }
    result = vec4(sum, 0.0, 0.0);
}
