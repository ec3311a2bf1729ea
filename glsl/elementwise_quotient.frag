// A saxpy variant: the element-wise quotient x ./ y.
uniform sampler2D X;
uniform sampler2D Y;
out float result;

void main() {
    result = texRECT(X, WPOS) / texRECT(Y, WPOS);
}
