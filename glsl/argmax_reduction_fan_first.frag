// Beyond the papers (issue 13): the first pass of the pivot search with FAN candidates a
// fragment (as sum_reduction_fan): the largest (|value| with `absolute`, -value with `negate`)
// of the FAN texels from T0 along `step`, with its position; the first of equals wins, as in
// argmax_reduction_first's pairs, so the answer is the same.
// With BLOCKING defined the candidates are the blocking ratios of blocking_ratio.frag, x = S and
// dx = DX, computed here instead of in a pass of their own (the LP's line search).
uniform sampler2D S;
#ifdef BLOCKING
uniform sampler2D DX;
#endif
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
#ifdef BLOCKING
            float x = texRECT(S, c);
            float dx = texRECT(DX, c);
            float a = dx < 0.0 ? max(0.0, -x / dx) : 3.0e38;
#else
            float a = texRECT(S, c);
#endif
            if (absolute) a = abs(a);
            if (negate) a = -a;
            if (i == 0 || a > best.r) best = vec4(a, floor(c), 0.0);
        }
    }
    result = best;
}
