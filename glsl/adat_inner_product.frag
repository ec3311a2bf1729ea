// aat / adat, singlepass inner-product form (paper 000, section 4.2, level 3): every entry of
// the lower triangle of C = A D² Aᵀ in one pass, C(i, j) = sum_k A(i, k) d(k) A(j, k). Each
// fragment loops along rows i and j of A; T0 is interpolated to the first element of row i
// ((.5, i + .5)), T1 to the first element of row j ((.5, j + .5)), over the triangle of
// Fig. 2(b) of paper 001 (or the whole square).
uniform sampler2D A;
uniform sampler2D d;
uniform int n;          // the columns of A
out float result;

void main() {
    vec2 row_i = T0.xy;
    vec2 row_j = T1.xy;
    float sum = 0.0;
    for (int k = 0; k < n; k++) {
        sum += texRECT(A, row_i) * texRECT(d, vec2(row_i.x, 0.5)) * texRECT(A, row_j);
        row_i.x += 1.0;
        row_j.x += 1.0;
    }
    result = sum;
}
