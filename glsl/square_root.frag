// Kernel 3 of paper 001 (square rooting): the pivot L(k, k) <- sqrt(L(k, k)), drawn as the
// single texel at (k, k).
uniform sampler2D L;
out float result;

void main() {
    vec2 index = WPOS;
    result = sqrt(texRECT(L, index.xy));
}
