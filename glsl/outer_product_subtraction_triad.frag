// Outer product subtraction with an index triad (paper 000, section 3.2): the neighbour pair
// (k, i) and the pivot pair (k, j) share the invariant k, so both are packed into one
// interpolated vec3 T0 = (k + .5, i + .5, j + .5) and restored by swizzles .xy and .xz.
uniform sampler2D L;
out float result;

void main() {
    vec2 index = WPOS;
    vec3 triad = T0;
    result = texRECT(L, index.xy)
           - texRECT(L, triad.xy)
           * texRECT(L, triad.xz);
}
