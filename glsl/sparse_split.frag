// Beyond papers 002 and 003: a row's partial sum over one segment of L entries, with values
// and column indexes in two float textures as T-ELL's (3 fetches a non-zero), the segment's
// entries down a texture column. The packed format's first pass without the packing (the
// "split" format), to tell the row splitting's gain from the packing's. T0 is interpolated to
// the segment's first entry, (x + .5, r L + .5) for the fragment at (x, r).
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D X;
uniform int x_width;       // row width of the folded x
out float result;

void main() {
    vec2 first = T0.xy;
    float sum = 0.0;
    for (int k = 0; k < L; ++k) {
        vec2 entry = first + vec2(0.0, k);
        sum += texRECT(values, entry) * texVECTOR(X, texRECT(columns, entry), x_width);
    }
    result = sum;
}
