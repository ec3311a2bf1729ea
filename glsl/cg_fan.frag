// One level of the fast preset's fused dot products in conjugate gradients (beyond the papers:
// 003 computes x^T y as a product pass and a pyramid of halving passes, Figs. 1-3). As
// reduction_fan.frag, fragment i adds the FAN texels FAN i .. FAN i + FAN - 1 along `step`,
// the first interpolated into T0, texels at or past `limit` skipped. TERM (compile-time)
// picks what is added:
//   0  the texels of S (a later level; with VEC, RGBA partials added as vec4);
//   1  S Y                     (d^T q: the products computed where they are summed);
//   2  S S                     (r^T r);
//   3  (S (Mdiag S), S S)      (Jacobi PCG: delta = r^T (M r) and ||r||^2 in one pass, written
//                               as the first two components of an RGBA partial, VEC);
//   4  (S S, W S)              (the single-reduction iteration of Chronopoulos and Gear, 1989,
//                               beyond paper 003: gamma = r^T r and delta = w^T r, w = A r, in one
//                               pass, VEC);
//   5  (S U, W U, S S)         (the same with Jacobi: gamma = r^T u, delta = w^T u, u = M r,
//                               w = A u, and ||r||^2, VEC).
// For TERM >= 1 the input is a vector folded into rows `width` texels wide of which the first
// `count` entries are data: a texel (x, y) with y width + x >= count is skipped, so the
// tail of a folded vector's last row never enters the sum, whatever lies there.
uniform sampler2D S;
uniform vec2 limit;     // first (x, y) past the input region
uniform vec2 step;      // (1, 0) or (0, 1)
#if TERM >= 1
uniform int width;
uniform int count;
#endif
#if TERM == 1
uniform sampler2D Y;
#endif
#if TERM == 3
uniform sampler2D Mdiag;
#endif
#if TERM >= 4
uniform sampler2D W;
#endif
#if TERM == 5
uniform sampler2D U;
#endif
#if VEC
out vec4 result;
#define ZERO vec4(0.0)
#define TYPE vec4
#else
out float result;
#define ZERO 0.0
#define TYPE float
#endif

TYPE term(vec2 c) {
#if TERM == 0
#if VEC
    return texRECT4(S, c);
#else
    return texRECT(S, c);
#endif
#else
    ivec2 p = ivec2(floor(c));
    if (p.y * width + p.x >= count)
        return ZERO;
    float s = texRECT(S, c);
#if TERM == 1
    return s * texRECT(Y, c);
#elif TERM == 2
    return s * s;
#elif TERM == 3
    float m = texRECT(Mdiag, c);
    return vec4(s * (m * s), s * s, 0.0, 0.0);
#elif TERM == 4
    return vec4(s * s, texRECT(W, c) * s, 0.0, 0.0);
#else
    float u = texRECT(U, c);
    return vec4(s * u, texRECT(W, c) * u, s * s, 0.0);
#endif
#endif
}

void main() {
    TYPE r = term(T0.xy);
    for (int i = 1; i < FAN; i++) {
        vec2 c = T0.xy + float(i) * step;
        if (all(lessThan(c, limit)))
            r += term(c);
    }
    result = r;
}
