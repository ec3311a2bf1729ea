// A scalar of conjugate gradients kept on the GPU (a 1 x 1 stream): alpha = delta / (d^T q)
// or beta = delta_new / delta_old (Shewchuk's listing, which paper 003 follows). Only the
// convergence test reads a scalar back.
// Once the iteration has converged (the watch `converged`, see cg_converged.frag, holds the
// iteration it converged at, >= 0) the scalar is 0: x = x + 0 d and r = r - 0 q leave the
// converged x and r exactly as they were, and d = s + 0 d stays finite, for the iterations
// that run on until the host's next read-back (no 0 / 0 once r is exactly zero).
uniform sampler2D numerator;
uniform sampler2D denominator;
uniform sampler2D converged;
out float result;

void main() {
    bool frozen = texRECT(converged, vec2(0.5)) >= 0.0;
    result = frozen ? 0.0 : texRECT(numerator, vec2(0.5)) / texRECT(denominator, vec2(0.5));
}
