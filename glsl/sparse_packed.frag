// Beyond papers 002 and 003: y = A x (or a row's partial sum) with A's entries packed two to an
// RGBA32F texel, (value, column, value, column), so that one fetch brings two entries (002's
// ELLPACK reads a value texel and a column texel for each). Each fragment sums one segment of
// L entries of a row (a row longer than L is split over several segments, summed by
// sparse_packed_sum.frag); the ceil(L / 2) texels of a segment lie down a texture column, as
// T-ELL's (neighbouring fragments read neighbouring texels). T0 is interpolated to the
// segment's first texel, (x + .5, r H + .5) for the fragment at (x, r), H = ceil(L / 2).
// L is a compile-time constant (one program per segment length), so the loop unrolls and the
// texels' fetches do not wait on one another. Column indexes are floats: exact below 2^24.
uniform sampler2D entries;
uniform sampler2D X;
uniform int x_width;       // row width of the folded x
out float result;

void main() {
    vec2 first = T0.xy;
    float sum = 0.0;
    for (int h = 0; h < L / 2; ++h) {
        vec4 e = texRECT4(entries, first + vec2(0.0, h));
        sum += e.x * texVECTOR(X, e.y, x_width) + e.z * texVECTOR(X, e.w, x_width);
    }
#if (L % 2) == 1
    vec4 e = texRECT4(entries, first + vec2(0.0, L / 2));
    sum += e.x * texVECTOR(X, e.y, x_width);
#endif
    result = sum;
}
