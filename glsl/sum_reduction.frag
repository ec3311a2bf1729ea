// One pass of the sum reduction (paper 000, level 1 kernels; paper 003, Figs. 2-3): each
// fragment adds the pair of texels whose indexes the rasterizer interpolated into T0
// (left or upper element, 2i) and T1 (its partner, 2i+1). A partner at or past `limit` lies
// beyond an odd-length input and counts as the identity, 0.0.
uniform sampler2D S;
uniform vec2 limit;     // first (x, y) past the input region
out float result;

void main() {
    float a = texRECT(S, T0.xy);
    float b = all(lessThan(T1.xy, limit)) ? texRECT(S, T1.xy) : 0.0;
    result = a + b;
}
