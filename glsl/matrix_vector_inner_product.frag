// sgemv, singlepass inner-product form (paper 000, section 4.2, level 2): each fragment of y
// loops along its row of A (down its column, for A^T) and returns alpha * A(i,:) x + beta * y_i.
// T0 is interpolated to the first element of the fragment's row (column) of A, T1 to x_0.
uniform sampler2D A;
uniform sampler2D X;
uniform sampler2D Y;
uniform int n;          // length of each inner product
uniform vec2 stride;    // (1, 0) along a row of A; (0, 1) down a column, for A^T
uniform float alpha;
uniform float beta;
out float result;

void main() {
    vec2 a_index = T0.xy;
    vec2 x_index = T1.xy;
    float sum = 0.0;
    for (int j = 0; j < n; j++) {
        sum += texRECT(A, a_index) * texRECT(X, x_index);
        a_index += stride;
        x_index.x += 1.0;
    }
    result = alpha * sum + (beta != 0.0 ? beta * texRECT(Y, WPOS) : 0.0);
}
