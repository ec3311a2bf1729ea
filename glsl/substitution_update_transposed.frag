// The same update for the transposed triangle (solving with L^T while only L is stored):
// b_i -= T(k, i) x_k. The texture coordinates are those of substitution_update (column k);
// the swizzle T0.yx turns them into row k, as paper 000 (section 3.2) swaps index pairs.
uniform sampler2D B;
uniform sampler2D T;
out float result;

void main() {
    result = texRECT(B, WPOS) - texRECT(T, T0.yx) * texRECT(B, T1.xy);
}
