// Beyond the papers (issue 13): the first pass of the pivot search with FAN candidates a
// fragment (as sum_reduction_fan): the largest (|value| with `absolute`, -value with `negate`)
// of the FAN texels from T0 along `step`, with its position; the first of equals wins, as in
// argmax_reduction_first's pairs, so the answer is the same.
uniform sampler2D S;
uniform vec2 limit;
uniform vec2 step;
uniform bool absolute;
uniform bool negate;
out vec4 result;

void main() {
    vec4 best = vec4(-3.402823466e38, floor(T0.xy), 0.0);
    for (int i = 0; i < FAN; i++) {
        vec2 c = T0.xy + float(i) * step;
        if (all(lessThan(c, limit))) {
            float a = texRECT(S, c);
            if (absolute) a = abs(a);
            if (negate) a = -a;
            if (i == 0 || a > best.r) best = vec4(a, floor(c), 0.0);
        }
    }
    result = best;
}
