// Convergence watch of conjugate gradients, on the GPU: the first iteration whose residual
// norm squared ||r||^2 was at most `threshold` (target^2), or -1 while none was. A 1 x 1
// stream, updated every iteration and read back with the residual norm every check_every
// iterations; from that iteration on the scalars alpha and beta are 0 (scalar_quotient.frag),
// so the iterations run between two read-backs after convergence change nothing.
uniform sampler2D converged;
uniform sampler2D rr;
uniform float threshold;
uniform float iteration;
out float result;

void main() {
    float old = texRECT(converged, vec2(0.5));
    result = old >= 0.0 ? old : (texRECT(rr, vec2(0.5)) <= threshold ? iteration : -1.0);
}
