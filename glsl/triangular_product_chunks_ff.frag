// Beyond the papers: triangular_product_chunks.frag in float-float arithmetic (float_float.glsl):
// the first of two passes of y = X v or y = Xᵀ v for the lower triangular X = L^-1 of
// gpgpu.float_float.factor_with_inverse, each inner product over the triangle cut into chunks of
// CHUNK terms. Fragment (i, c):
//     P(c, i) = sum over j in chunk c, j <= i, of X(i, j) v_j,   or, transposed,
//     P(c, i) = sum over j in chunk c, j >= i, of X(j, i) v_j;
// column_sums_ff adds each column of P. X(i, j) at texel (j, i); v_j at texel (j, 0); hi in .r,
// lo in .g.
uniform sampler2D X;
uniform sampler2D V;
uniform int m;
uniform bool transposed;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (i, c)
    int i = t.x;
    int j0 = t.y * CHUNK;
    int j1 = min(j0 + CHUNK, m);
    vec2 sum = vec2(0.0);
    if (transposed) {
        for (int j = max(j0, i); j < j1; j++)
            sum = ff_add(sum, ff_mul(texelFetch(X, ivec2(i, j), 0).rg, texelFetch(V, ivec2(j, 0), 0).rg));
    } else {
        for (int j = j0; j < min(j1, i + 1); j++)
            sum = ff_add(sum, ff_mul(texelFetch(X, ivec2(j, i), 0).rg, texelFetch(V, ivec2(j, 0), 0).rg));
    }
    result = vec4(sum, 0.0, 0.0);
}
