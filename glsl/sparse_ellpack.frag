// FSAX, y = A x, with A in ELLPACK (paper 002, section 3.2): one fragment per row, the row's K
// entries (values and column indexes) side by side along a texture row. T0 is interpolated to
// the row's first entry: (r K + .5, x + .5) for the fragment at (x, r) of the folded y; the
// loop walks the entries to its right and gathers x at each column index. A row shorter than
// K is padded with column -1, where the loop stops (beyond 002: a row costs its own entries).
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
uniform int K;             // entries per row (padding included)
uniform int x_width;       // row width of the folded x
out float result;

void main() {
    vec2 first = T0.xy;
    float sum = 0.0;
    for (int k = 0; k < K; ++k) {
        vec2 entry = first + vec2(k, 0.0);
        float column = texRECT(columns, entry);
        if (column < 0.0)
            break;
        sum += texRECT(values, entry) * texVECTOR(X, column, x_width);
    }
    result = sum;
}
