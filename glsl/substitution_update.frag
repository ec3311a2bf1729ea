// Forward / backward substitution (paper 000, level 2), second kernel of step k: every
// remaining right-hand side entry b_i -= T(i, k) x_k, drawn as one rectangle over the
// remaining entries. T0 is interpolated down column k of T, T1 points at x_k.
uniform sampler2D B;
uniform sampler2D T;
out float result;

void main() {
    result = texRECT(B, WPOS) - texRECT(T, T0.xy) * texRECT(B, T1.xy);
}
