// The first pass of the inner products of the k planes of a stacked texture P with a vector Y
// (each plane folded like Y: plane c at texture rows c plane_rows ..), the products summed FAN
// a fragment (beyond the papers: 003's Fig. 1 product and the first pass of the fan sum in one
// pass; the P^-1 r of paper 002 (7)-(8) applies two such products). Fragment (i, R) of the
// output adds P(FAN i + j, R) Y(FAN i + j, R mod plane_rows) for j < FAN, texels at or past
// `limit` along the row skipped, as reduction_fan.frag; the texels at or past the vector's
// length `entries` (the tail of a folded vector's last row) count 0, so no pass clears them.
uniform sampler2D S;    // P, the planes
uniform sampler2D Y;
uniform vec2 limit;
uniform vec2 step;      // (1, 0): along the rows
uniform int plane_rows;
uniform int width;      // Y's texture width (its folding)
uniform int entries;    // Y's length
out float result;

float term(vec2 c) {
    ivec2 t = ivec2(floor(c));
    int row = t.y % plane_rows;
    if (row * width + t.x >= entries)
        return 0.0;
    return texelFetch(S, t, 0).r * texelFetch(Y, ivec2(t.x, row), 0).r;
}

void main() {
    float r = term(T0.xy);
    for (int i = 1; i < FAN; i++) {
        vec2 c = T0.xy + float(i) * step;
        if (all(lessThan(c, limit)))
            r += term(c);
    }
    result = r;
}
