// The copy kernel (paper 000, Algorithm 2; paper 001, Algorithm 5): each fragment takes the
// texel of A at its interpolated texture coordinate T0. With T0 = WPOS it copies in place
// (S <- T of a ping-pong pair); with other coordinates it moves data (row swaps, gathers).
uniform sampler2D A;
out float result;

void main() {
    result = texRECT(A, T0.xy);
}
