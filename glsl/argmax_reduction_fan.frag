// Beyond the papers (issue 13): a later pass of the pivot search, FAN (value, x, y) texels a
// fragment from T0 along `step`; the first of equals wins (the same answer as the pairs).
uniform sampler2D S;
uniform vec2 limit;
uniform vec2 step;
out vec4 result;

void main() {
    vec4 best = texRECT4(S, T0.xy);
    for (int i = 1; i < FAN; i++) {
        vec2 c = T0.xy + float(i) * step;
        if (all(lessThan(c, limit))) {
            vec4 b = texRECT4(S, c);
            if (b.r > best.r) best = b;
        }
    }
    result = best;
}
