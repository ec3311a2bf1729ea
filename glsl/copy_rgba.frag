// The copy kernel (paper 000, Algorithm 2) for RGBA streams: all four components of the texel
// of A at T0 (the float-float streams of gpgpu.float_float keep hi in .r and lo in .g).
uniform sampler2D A;
out vec4 result;

void main() {
    result = texRECT4(A, T0.xy);
}
