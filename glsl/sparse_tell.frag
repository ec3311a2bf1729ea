// FSAX, y = A x, with A in transposed ELLPACK (paper 002, section 3.2, "Transpose ELLPACK"):
// the K entries of a row lie down a texture column, so that neighbouring fragments (rows)
// fetch neighbouring texels at every step of the loop. T0 is interpolated to the row's first
// entry, (x + .5, r K + .5) for the fragment at (x, r) of the folded y.
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
uniform int K;
uniform int x_width;
out float result;

void main() {
    vec2 first = T0.xy;
    float sum = 0.0;
    for (int k = 0; k < K; ++k) {
        vec2 entry = first + vec2(0.0, k);
        sum += texRECT(values, entry) * texVECTOR(X, texRECT(columns, entry), x_width);
    }
    result = sum;
}
