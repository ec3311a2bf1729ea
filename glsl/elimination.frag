// Elimination kernel of LU-GPU (paper 004; Table 1(a) of 000): the active element A(i, j)
// loses l(i, k) u(k, j). The index pairs of both operands stream in as interpolated texture
// coordinates ("index-pair streaming"): T0 = (k + .5, i + .5) runs down column k, T1 =
// (j + .5, k + .5) along row k.
uniform sampler2D A;
out float result;

void main() {
    vec2 index = WPOS;
    result = texRECT(A, index.xy) - texRECT(A, T0.xy) * texRECT(A, T1.xy);
}
