// Kernel 5 of paper 001 (outer product subtraction), index swizzle: the active entry L(i, j)
// at WPOS loses L(i, k) L(j, k). T0 is interpolated to the active neighbour (k + .5, i + .5);
// T1 is interpolated to (j + .5, k + .5) and swizzled to the pivot (k + .5, j + .5), "at no
// cost" (paper 000, section 3.2; Fig. 5 of 001).
uniform sampler2D L;
out float result;

void main() {
    vec2 index = WPOS;
    vec2 neighbor_index = T0.xy;
    vec2 pivot_index = T1.xy;
    result = texRECT(L, index.xy)
           - texRECT(L, neighbor_index.xy)
           * texRECT(L, pivot_index.yx);
}
