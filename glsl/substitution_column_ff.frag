// Beyond the papers (issue 11): a step of the column-oriented substitution (paper 000, level 2;
// blas2's three passes a step: division, copy, update) as one pass over the whole vector, in
// float-float arithmetic (float_float.glsl). Every fragment reads the state before the step:
//     x_k = b_k / T(k, k)                     (the fragment of entry k)
//     b_i = b_i - T(i, k) b_k / T(k, k)       (the entries not finished: i > k forward, i < k backward)
//     b_i unchanged                           (the finished ones)
// by_rows: T(k, i) instead of T(i, k) (Tᵀ through the swizzle). T(i, j) at texel (j, i); T and
// X hi in .r, lo in .g. Each fragment does one division and one product, where the inner-product
// form's fragment k does k of them.
uniform sampler2D X;        // b, with the finished x_j in place
uniform sampler2D T;
uniform int k;
uniform bool forward;
uniform bool by_rows;       // solve with Tᵀ
out vec4 result;

void main() {
    int i = int(WPOS.x);
    vec4 xi = texelFetch(X, ivec2(i, 0), 0);
    if (forward ? i < k : i > k) {          // finished: copied
        result = xi;
        return;
    }
    vec2 xk = ff_div(texelFetch(X, ivec2(k, 0), 0).rg, texelFetch(T, ivec2(k, k), 0).rg);
    if (i == k) {
        result = vec4(xk, 0.0, 0.0);
        return;
    }
    vec2 tik = texelFetch(T, by_rows ? ivec2(i, k) : ivec2(k, i), 0).rg;    // T(i, k) at texel (k, i)
    result = vec4(ff_sub(xi.rg, ff_mul(tik, xk)), 0.0, 0.0);
}
