// saxpy with the scalar on the GPU (paper 003's "scaled vector addition and subtraction"):
// Y + sign * s X, with s read from a 1 x 1 stream (alpha or beta of CG) and sign = +1 or -1
// ("subtraction can be mapped into an addition problem by simply negating the scalar").
uniform sampler2D X;
uniform sampler2D Y;
uniform sampler2D s;
uniform float sign;
out float result;

void main() {
    result = texRECT(Y, WPOS) + sign * texRECT(s, vec2(0.5)) * texRECT(X, WPOS);
}
