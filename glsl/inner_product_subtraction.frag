// Inner product subtraction (paper 000, Algorithm 1 and Fig. 3(c); the inner-product form):
// the entry L(j, k+1) of the next column loses the inner product of row j and row k + 1 over
// the finished columns 0 .. k, in a dynamic loop. The index pairs of the two rows are
// gathered from two separate interpolated variables, T0 (row j) and T1 (row k + 1).
uniform sampler2D L;
uniform int count;      // k + 1 finished columns
out float result;

void main() {
    vec2 index = WPOS;
    vec2 row_index = T0.xy;     // (0.5, j + .5)
    vec2 pivot_index = T1.xy;   // (0.5, k + 1.5)
    float sum = 0.0;
    for (int l = 0; l < count; l++) {
        sum += texRECT(L, row_index) * texRECT(L, pivot_index);
        row_index.x += 1.0;
        pivot_index.x += 1.0;
    }
    result = texRECT(L, index.xy) - sum;
}
