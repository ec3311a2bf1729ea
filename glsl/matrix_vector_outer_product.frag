// sgemv, multipass outer-product form (paper 000, section 4.2, level 2): one pass per column j
// of A (row j, for A^T) adds alpha * x_j * A(:, j) to y. T0 is interpolated along the column,
// T1 points at x_j.
uniform sampler2D A;
uniform sampler2D X;
uniform sampler2D Y;
uniform float alpha;
out float result;

void main() {
    result = texRECT(Y, WPOS) + alpha * texRECT(A, T0.xy) * texRECT(X, T1.xy);
}
