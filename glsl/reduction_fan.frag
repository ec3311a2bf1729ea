// One pass of a fan reduction (beyond the papers: 000's level-1 reductions and 003's Fig. 3
// combine pairs; this combines FAN texels per fragment, so a length n takes ceil(log_FAN n)
// passes instead of ceil(log2 n)). Fragment i of the output combines the input texels FAN i ..
// FAN i + FAN - 1 along `step` ((1, 0): along rows; (0, 1): down columns). The rasterizer
// interpolates the first of them into T0 (T0 = FAN WPOS - (FAN - 1) / 2 along the axis, the
// halving pass's 2 WPOS - 0.5 for FAN = 2); the first always lies inside the input (the
// output has ceil(n / FAN) fragments), texels at or past `limit` lie beyond it and are
// skipped. OP (a compile-time constant) picks the reduction, each as its halving kernel
// combines a pair: 0 sum (sum_reduction), 1 max (max_reduction), 2 min (min_reduction), 3
// absmax (absmax_reduction, which passes a NaN on). Starting from the first texel rather than
// an identity keeps an infinity (the min of +inf's is +inf, not the largest float).
// TERM (a compile-time constant, default 0) lets the first pass reduce an element-wise term of
// S and a second stream Y instead of S itself, so that the term needs no pass of its own:
// 1 the product S Y (an inner product, with OP 0), 2 the line search's ratio of
// step_ratio.frag, x = S, dx = Y (with OP 2), 3 the product of two steps (a Y + S)(b W + Z)
// (with OP 0: Mehrotra's mu_aff, the saxpy kernel's operations).
uniform sampler2D S;
uniform vec2 limit;     // first (x, y) past the input region
uniform vec2 step;      // (1, 0) or (0, 1)
out float result;

#if OP == 0
#define COMBINE(a, b) ((a) + (b))
#elif OP == 1
#define COMBINE(a, b) max(a, b)
#elif OP == 2
#define COMBINE(a, b) min(a, b)
#else
#define COMBINE(a, b) ((isnan(a) || isnan(b)) ? (a) + (b) : max(a, b))
#endif

#ifndef TERM
#define TERM 0
#endif

#if TERM == 1
uniform sampler2D Y;
#define VALUE(c) (texRECT(S, c) * texRECT(Y, c))
#elif TERM == 2
uniform sampler2D Y;
float step_ratio(vec2 c) {
    float x = texRECT(S, c);
    float dx = texRECT(Y, c);
    return dx < 0.0 ? min(1.0, max(0.0, -x / dx)) : 1.0;
}
#define VALUE(c) step_ratio(c)
#elif TERM == 3
uniform sampler2D Y;
uniform sampler2D Z;
uniform sampler2D W;
uniform float a;
uniform float b;
#define VALUE(c) ((a * texRECT(Y, c) + texRECT(S, c)) * (b * texRECT(W, c) + texRECT(Z, c)))
#elif OP == 3
#define VALUE(c) abs(texRECT(S, c))
#else
#define VALUE(c) texRECT(S, c)
#endif

void main() {
    float r = VALUE(T0.xy);
    for (int i = 1; i < FAN; i++) {
        vec2 c = T0.xy + float(i) * step;
        if (all(lessThan(c, limit)))
            r = COMBINE(r, VALUE(c));
    }
    result = r;
}
