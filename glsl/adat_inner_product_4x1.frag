// adat, singlepass inner-product form (paper 000, section 4.2, level 3) over 4 x 1 packed
// texels (beyond the papers): A and d packed four columns a texel (pack_4x1), so that each
// fragment of the lower triangle of C = A D² Aᵀ takes C(i, j) = sum_q dot(A4(i, q) d4(q),
// A4(j, q)) with three fetches per four columns instead of three per column. T0 and T1 as in
// adat_inner_product: the first texel of rows i and j ((.5, i + .5), (.5, j + .5)), over the
// triangle of Fig. 2(b) of paper 001 (or the whole square).
uniform sampler2D A;    // m x ceil(n / 4), RGBA
uniform sampler2D d;    // 1 x ceil(n / 4), RGBA
uniform int n4;         // the texels of a packed row
out float result;

void main() {
    vec2 row_i = T0.xy;
    vec2 row_j = T1.xy;
    float sum = 0.0;
    for (int q = 0; q < n4; q++) {
        sum += dot(texRECT4(A, row_i) * texRECT4(d, vec2(row_i.x, 0.5)), texRECT4(A, row_j));
        row_i.x += 1.0;
        row_j.x += 1.0;
    }
    result = sum;
}
