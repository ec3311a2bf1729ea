// Gather through an index stream: fragment i of the output takes B(P(i)), where the index
// stream P holds column numbers. Applies a row permutation to a right-hand side (LU solves).
uniform sampler2D B;
uniform sampler2D P;
out float result;

void main() {
    float source = texRECT(P, WPOS);
    result = texRECT(B, vec2(source + 0.5, WPOS.y));
}
