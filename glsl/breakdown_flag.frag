// Breakdown watch of conjugate gradients, on the GPU: the first iteration at which d^T A d
// was not positive (A is not positive definite), or -1 while it never happened. A 1 x 1
// stream, updated every iteration and read back with the residual norm.
// An overflow is told apart: a d^T A d that is inf or NaN (the iteration diverged past float32's
// range) records iteration + 0.5, so the host can say "diverged" rather than "not SPD".
uniform sampler2D flag;
uniform sampler2D dAd;
uniform float iteration;
out float result;

void main() {
    float old = texRECT(flag, vec2(0.5));
    float v = texRECT(dAd, vec2(0.5));
    bool overflow = isinf(v) || isnan(v);
    bool not_positive = !overflow && !(v > 0.0);
    result = old >= 0.0 ? old : (overflow ? iteration + 0.5 : (not_positive ? iteration : -1.0));
}
