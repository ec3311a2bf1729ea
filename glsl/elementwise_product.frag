// A saxpy variant (paper 000, level 1; paper 003, Fig. 1): the element-wise product x .* y,
// the first half of the inner product.
uniform sampler2D X;
uniform sampler2D Y;
out float result;

void main() {
    result = texRECT(X, WPOS) * texRECT(Y, WPOS);
}
