// Beyond papers 002 and 003: the second pass of the packed format's split rows. Row i of y
// (the fragment at WPOS of the folded y, i = row * y_width + column) is the sum of its
// segments' partial sums P(start) .. P(start + count - 1), consecutive in the folded partials
// vector P (p_width wide). With SEGMENTS defined every row has that many, starting at
// i * SEGMENTS; otherwise each row's (start, count) is read from the texel of `meta` at WPOS.
uniform sampler2D P;
uniform int p_width;       // row width of the folded partials
#ifdef SEGMENTS
uniform int y_width;
#else
uniform sampler2D meta;    // folded like y: (first segment, segments, -, -)
#endif
out float result;

float partial(int j) {
    return texelFetch(P, ivec2(j % p_width, j / p_width), 0).r;
}

void main() {
    float sum = 0.0;
#ifdef SEGMENTS
    ivec2 at = ivec2(floor(WPOS));
    int start = (at.y * y_width + at.x) * SEGMENTS;
    for (int t = 0; t < SEGMENTS; ++t) sum += partial(start + t);
#else
    vec4 row = texRECT4(meta, WPOS);
    int start = int(row.x);
    int count = int(row.y);
    for (int t = 0; t < count; ++t) sum += partial(start + t);
#endif
    result = sum;
}
