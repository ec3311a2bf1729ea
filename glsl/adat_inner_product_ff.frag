// Beyond the papers (issue 11): the singlepass inner-product adat of paper 000 (section 4.2,
// level 3; adat_inner_product.frag) in float-float arithmetic (float_float.glsl):
// C(i, j) = sum_k A(i, k) d(k) A(j, k) with A, d and C float-float (hi in .r, lo in .g). Same
// primitive and texture coordinates: T0 at the first element of row i, T1 of row j. Terms with
// a zero factor of A are skipped (A is sparse; they add exactly nothing).
uniform sampler2D A;
uniform sampler2D d;
uniform int n;          // the columns of A
out vec4 result;

void main() {
    vec2 row_i = T0.xy;
    vec2 row_j = T1.xy;
    vec2 sum = vec2(0.0);
    for (int k = 0; k < n; k++) {
        vec2 a = ffRECT(A, row_i);
        vec2 b = ffRECT(A, row_j);
        if (a.x != 0.0 && b.x != 0.0)
            sum = ff_add(sum, ff_mul(ff_mul(a, ffRECT(d, vec2(row_i.x, 0.5))), b));
        row_i.x += 1.0;
        row_j.x += 1.0;
    }
    result = vec4(sum, 0.0, 0.0);
}
