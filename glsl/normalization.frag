// Kernel 4 of paper 001 (normalization): each entry of column k below the diagonal is divided
// by the square-rooted pivot, whose index the (constant) texture coordinate T0 gives.
uniform sampler2D L;
out float result;

void main() {
    vec2 index = WPOS;
    vec2 pivot_index = T0.xy;
    result = texRECT(L, index.xy) / texRECT(L, pivot_index.xy);
}
