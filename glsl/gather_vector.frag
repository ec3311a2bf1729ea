// Gather of a folded vector: entry i of the output takes B(P(i)); P holds entry numbers. The
// row and column permutation of paper 003's sorting, and its undoing at the end.
uniform sampler2D B;
uniform sampler2D P;
uniform int b_width;
out float result;

void main() {
    result = texVECTOR(B, texRECT(P, WPOS), b_width);
}
