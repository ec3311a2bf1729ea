// Kernel 2 of paper 001 (outer product addition): C(i, j) += A(i, k) b(j). T0 is interpolated
// to (k + .5, i + .5) in A, T1 to (j + .5, .5) in b, over the triangle of Fig. 2(b).
uniform sampler2D C;
uniform sampler2D A;
uniform sampler2D b;
out float result;

void main() {
    vec2 C_index = WPOS;
    vec2 A_index = T0.xy;
    vec2 b_index = T1.xy;
    result = texRECT(C, C_index.xy)
           + texRECT(A, A_index.xy) * texRECT(b, b_index.xy);
}
