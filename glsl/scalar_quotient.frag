// A scalar of conjugate gradients kept on the GPU (a 1 x 1 stream): alpha = delta / (d^T q)
// or beta = delta_new / delta_old (Shewchuk's listing, which paper 003 follows). Only the
// convergence test reads a scalar back.
uniform sampler2D numerator;
uniform sampler2D denominator;
out float result;

void main() {
    result = texRECT(numerator, vec2(0.5)) / texRECT(denominator, vec2(0.5));
}
