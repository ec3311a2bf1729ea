// Later passes of the argmax reduction: pairs of (value, x, y) texels; the larger value wins,
// a tie keeps the first (T0), so the first maximum in the reduction order wins.
uniform sampler2D S;
uniform vec2 limit;
out vec4 result;

void main() {
    vec4 a = texRECT4(S, T0.xy);
    if (all(lessThan(T1.xy, limit))) {
        vec4 b = texRECT4(S, T1.xy);
        if (b.r > a.r) a = b;
    }
    result = a;
}
