// saxpy (paper 000, level 1): alpha * x + y, element by element.
uniform sampler2D X;
uniform sampler2D Y;
uniform float alpha;
out float result;

void main() {
    result = alpha * texRECT(X, WPOS) + texRECT(Y, WPOS);
}
