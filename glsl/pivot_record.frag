// Keep step k's pivot on the GPU (beyond the papers, issue 13): the texel (k, 0) of a 1 x n
// RGBA stream receives the argmax reduction's 1 x 1 result (value, x, y, 0). The stream is read
// back once, after the factorization, for the permutations and the singularity check.
uniform sampler2D pivot;
out vec4 result;

void main() {
    result = texRECT4(pivot, vec2(0.5));
}
