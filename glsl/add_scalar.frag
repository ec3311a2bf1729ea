// A saxpy variant: x + alpha.
uniform sampler2D X;
uniform float alpha;
out float result;

void main() {
    result = texRECT(X, WPOS) + alpha;
}
