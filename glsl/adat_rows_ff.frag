// Beyond the papers: the float-float singlepass inner-product adat (adat_inner_product_ff.frag,
// paper 000's level 3 adat in float-float) over the non-zeros of row i of A only:
// C(i, j) = sum over the non-zeros A(i, k) of A(i, k) d(k) A(j, k), in the order of k. The terms
// the dense kernel skips (a zero factor of A) are the terms not listed here, and the rest are
// added in the same order: the same sums. A fragment reads 3 texels a non-zero of its row i,
// where the dense kernel reads 2 a column of A.
// Same primitive and texture coordinates as the dense kernel: T0 in row i of A, T1 in row j.
uniform sampler2D A;         // float-float A (m x n): A(j, k) at texel (k, j)
uniform sampler2D d;         // float-float d (1 x n)
uniform sampler2D entries;   // row after row, the non-zeros of A as (k, hi, lo, 0), W texels a row
uniform sampler2D starts;    // 1 x (m + 1): where row i's non-zeros begin in entries (R32F)
uniform int W;
out vec4 result;

void main() {
    int i = int(floor(T0.y));
    int j = int(floor(T1.y));
    int p = int(texelFetch(starts, ivec2(i, 0), 0).r);
    int end = int(texelFetch(starts, ivec2(i + 1, 0), 0).r);
    vec2 sum = vec2(0.0);
    for (; p < end; p++) {
        vec4 e = texelFetch(entries, ivec2(p % W, p / W), 0);   // (k, A(i, k) hi, lo, 0)
        int k = int(e.x);
        vec2 b = texelFetch(A, ivec2(k, j), 0).rg;
        if (b.x != 0.0)
            sum = ff_add(sum, ff_mul(ff_mul(e.yz, texelFetch(d, ivec2(k, 0), 0).rg), b));
    }
    result = vec4(sum, 0.0, 0.0);
}
