// Outer product subtraction with a computed pivot index (the variant paper 000, section
// 6.1.3, compares against the swizzle): the pivot index pair (k + .5, j + .5) is gathered in
// the kernel from the interpolated neighbour index (its x, k + .5) and the element index
// (its x, j + .5), which costs instructions the swizzle does not.
uniform sampler2D L;
out float result;

void main() {
    vec2 index = WPOS;
    vec2 neighbor_index = T0.xy;
    vec2 pivot_index = vec2(neighbor_index.x, index.x);
    result = texRECT(L, index.xy)
           - texRECT(L, neighbor_index.xy)
           * texRECT(L, pivot_index.xy);
}
