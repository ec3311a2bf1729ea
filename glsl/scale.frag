// A saxpy variant: alpha * x.
uniform sampler2D X;
uniform float alpha;
out float result;

void main() {
    result = alpha * texRECT(X, WPOS);
}
