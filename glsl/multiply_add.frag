// a (x .* y) + b z, element by element (beyond the papers): the elementwise_product, scale and
// saxpy of the interior point method's directions ((4.12)-(4.14) of 000) in one pass, with
// the same float32 operations in the same order.
uniform sampler2D X;
uniform sampler2D Y;
uniform sampler2D Z;
uniform float a;
uniform float b;
out float result;

void main() {
    result = a * (texRECT(X, WPOS) * texRECT(Y, WPOS)) + b * texRECT(Z, WPOS);
}
