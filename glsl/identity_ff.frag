// identity.frag for float-float (RGBA) streams: (1, 0) where the fragment's column, less
// `offset`, equals its row, else (0, 0) (hi in .r, lo in .g). Starts the float-float L^-1 of
// gpgpu.float_float.factor_with_inverse on the GPU.
uniform float offset;
out vec4 result;

void main() {
    result = vec4(floor(WPOS.x) - offset == floor(WPOS.y) ? 1.0 : 0.0, 0.0, 0.0, 0.0);
}
