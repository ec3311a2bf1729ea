// One pass of the absmax reduction (paper 000, level 1 kernels; paper 003, Figs. 2-3): each
// fragment takes the larger magnitude of the pair of texels whose indexes the rasterizer interpolated into T0
// (left or upper element, 2i) and T1 (its partner, 2i+1). A partner at or past `limit` lies
// beyond an odd-length input and counts as the identity, 0.0. A NaN is passed on (GLSL's max
// may drop it), so that an infinity norm never hides one.
uniform sampler2D S;
uniform vec2 limit;     // first (x, y) past the input region
out float result;

void main() {
    float a = abs(texRECT(S, T0.xy));
    float b = all(lessThan(T1.xy, limit)) ? abs(texRECT(S, T1.xy)) : 0.0;
    result = (isnan(a) || isnan(b)) ? a + b : max(a, b);
}
