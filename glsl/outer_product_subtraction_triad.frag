// Outer product subtraction with an index triad (paper 000, section 3.2): the neighbour pair
// (k, i) and the pivot pair (k, j) share the invariant index k, which is "put at a z
// coordinate which is invariant to the x and y coordinates". One interpolated vec3
// T0 = (j + .5, i + .5, k + .5) carries both pairs, restored by swizzles: .zy is the
// neighbour L(i, k) at (k + .5, i + .5), .zx the pivot L(j, k) at (k + .5, j + .5).
uniform sampler2D L;
out float result;

void main() {
    vec2 index = WPOS;
    vec3 triad = T0;
    result = texRECT(L, index.xy)
           - texRECT(L, triad.zy)
           * texRECT(L, triad.zx);
}
