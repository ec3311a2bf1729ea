// The identity matrix drawn on the GPU (beyond the papers): 1 where the fragment's column, less
// `offset`, equals its row, else 0. Starts L^-1's Gauss-Jordan (gpgpu.cholesky.lower_inverse,
// factor_with_inverse) without uploading an m x m identity at every factorization: an upload
// into a texture the GPU may still be reading makes the CPU wait for it.
uniform float offset;
out float result;

void main() {
    result = floor(WPOS.x) - offset == floor(WPOS.y) ? 1.0 : 0.0;
}
