// One pass of the max reduction (paper 000, level 1 kernels; paper 003, Figs. 2-3): each
// fragment takes the larger of the pair of texels whose indexes the rasterizer interpolated into T0
// (left or upper element, 2i) and T1 (its partner, 2i+1). A partner at or past `limit` lies
// beyond an odd-length input and counts as the identity, -3.402823466e38.
uniform sampler2D S;
uniform vec2 limit;     // first (x, y) past the input region
out float result;

void main() {
    float a = texRECT(S, T0.xy);
    float b = all(lessThan(T1.xy, limit)) ? texRECT(S, T1.xy) : -3.402823466e38;
    result = max(a, b);
}
