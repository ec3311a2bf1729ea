// Breakdown watch of conjugate gradients, on the GPU: the first iteration at which d^T A d
// was not positive (A is not positive definite), or -1 while it never happened; an overflow
// (d^T A d inf or NaN: the iteration diverged past float32's range) records iteration + 0.5.
// As breakdown_flag.frag, but silent once the iteration has converged (`converged` >= 0, see
// cg_converged.frag): a converged r may be exactly zero, and then so are d and d^T A d.
uniform sampler2D flag;
uniform sampler2D dAd;
uniform sampler2D converged;
uniform float iteration;
out float result;

void main() {
    float old = texRECT(flag, vec2(0.5));
    float v = texRECT(dAd, vec2(0.5));
    bool frozen = texRECT(converged, vec2(0.5)) >= 0.0;
    bool overflow = isinf(v) || isnan(v);
    bool not_positive = !overflow && !(v > 0.0);
    result = (old >= 0.0 || frozen) ? old : (overflow ? iteration + 0.5 : (not_positive ? iteration : -1.0));
}
