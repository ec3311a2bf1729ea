// (x .* y + c) ./ z, element by element (beyond the papers): the elementwise_product,
// add_scalar and elementwise_quotient of Mehrotra's corrector right-hand side S^-1 r_xs,
// r_xs = dX_aff dS_aff e - sigma mu e ((4.12)-(4.14) of 000), in one pass, with the same
// float32 operations in the same order.
uniform sampler2D X;
uniform sampler2D Y;
uniform sampler2D Z;
uniform float c;
out float result;

void main() {
    result = (texRECT(X, WPOS) * texRECT(Y, WPOS) + c) / texRECT(Z, WPOS);
}
