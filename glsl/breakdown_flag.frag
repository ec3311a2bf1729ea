// Breakdown watch of conjugate gradients, on the GPU: the first iteration at which d^T A d
// was not positive (A is not positive definite), or -1 while it never happened. A 1 x 1
// stream, updated every iteration and read back with the residual norm.
uniform sampler2D flag;
uniform sampler2D dAd;
uniform float iteration;
out float result;

void main() {
    float old = texRECT(flag, vec2(0.5));
    float v = texRECT(dAd, vec2(0.5));
    bool bad = !(v > 0.0) || isinf(v);
    result = old >= 0.0 ? old : (bad ? iteration : -1.0);
}
