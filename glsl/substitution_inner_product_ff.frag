// Beyond the papers (issue 11): substitution_inner_product.frag in float-float arithmetic
// (float_float.glsl). One pass per step k: x_k = (b_k - sum_j T(k, j) x_j) / T(k, k) over the
// finished j (j < k forward, j > k backward; by_rows: T(j, k), i.e. Tᵀ through the swizzle);
// every other fragment copies its entry. T(i, j) at texel (j, i); T and X hi in .r, lo in .g.
uniform sampler2D X;        // b, with the finished x_j in place
uniform sampler2D T;
uniform int k;
uniform int n;
uniform bool forward;
uniform bool by_rows;       // solve with Tᵀ
out vec4 result;

void main() {
    vec4 xi = texelFetch(X, ivec2(floor(WPOS)), 0);
    if (int(WPOS.x) != k) {
        result = xi;
        return;
    }
    int j0 = forward ? 0 : k + 1;
    int j1 = forward ? k : n;
    vec2 sum = xi.rg;
    for (int j = j0; j < j1; j++) {
        vec2 kj = vec2(float(j) + 0.5, float(k) + 0.5);      // texel of T(k, j)
        sum = ff_sub(sum, ff_mul(ffRECT(T, by_rows ? kj.yx : kj), ffRECT(X, vec2(float(j) + 0.5, 0.5))));
    }
    result = vec4(ff_div(sum, ffRECT(T, vec2(float(k) + 0.5, float(k) + 0.5))), 0.0, 0.0);
}
