// First pass of the argmax reduction (pivot search of LU-GPU, paper 004): like the max
// reduction, but each output texel carries (value, x, y) of the winner, read from a plain
// R32F stream. With `absolute` the magnitudes are compared (partial and full pivoting); with
// `negate` the negated values (an argmin: the blocking index of the line search).
// Ties keep the first element (T0), so the first maximum wins, as idamax does.
uniform sampler2D S;
uniform vec2 limit;
uniform bool absolute;
uniform bool negate;
out vec4 result;

void main() {
    float a = texRECT(S, T0.xy);
    if (absolute) a = abs(a);
    if (negate) a = -a;
    vec4 best = vec4(a, floor(T0.xy), 0.0);
    if (all(lessThan(T1.xy, limit))) {
        float b = texRECT(S, T1.xy);
        if (absolute) b = abs(b);
        if (negate) b = -b;
        if (b > a) best = vec4(b, floor(T1.xy), 0.0);
    }
    result = best;
}
