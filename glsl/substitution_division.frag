// Forward / backward substitution (paper 000, level 2), first kernel of step k: the unknown
// x_k = b_k / T(k, k), drawn as the single texel k of the vector. T0 points at the diagonal
// element. With unit_diagonal (the L of LU) it is a copy.
uniform sampler2D B;
uniform sampler2D T;
uniform bool unit_diagonal;
out float result;

void main() {
    float b = texRECT(B, WPOS);
    result = unit_diagonal ? b : b / texRECT(T, T0.xy);
}
