#version 330
// Beyond the papers (issue 11): the vertex program of cholesky_inverse_steps. pass.vert's work,
// and what every fragment of the pass needs and all of them share: the STEPS pivots of the pass
// and the block's columns at their steps. Each vertex fetches the diagonal block
// B = S(k .. k+s-1, k .. k+s-1) of the state S before step k, replays the s steps on it with the
// one-step passes' float32 operations,
//   step k + t   d_t = B_t(t, t) (guarded),
//                B_{t+1}(a, b) = B_t(a, b) - B_t(a, t) B_t(b, t) / d_t        (a >= b > t),
// and hands d_t, sqrt(d_t) and the column B_t(a, t), a > t, to the fragments as flat (not
// interpolated) values. A fragment then fetches only its own row's and column's entries, not
// the block and the guard's diagonal. Vertex programs of 2005's GPUs read textures too (vertex
// texture fetch, Shader Model 3.0). s = min(STEPS, m - k); the loops have constant bounds so
// that a compiler unrolls them and keeps the arrays in registers. The 2 STEPS + STEPS (STEPS -
// 1) / 2 values go packed four a vec4 (PACKED: 4 vec4 at STEPS = 4, 11 at 8), so that they fit
// OpenGL 3.3's guaranteed 15 varying vectors beside T0 and T1 on any driver, not only on one
// that packs scalar arrays itself.
uniform vec2 viewport;          // width and height of the target stream, in texels
uniform sampler2D L;
uniform sampler2D M0;
uniform int k;
uniform int m;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
in vec2 V;
in vec3 in_T0;
in vec3 in_T1;
noperspective out vec3 T0;
noperspective out vec3 T1;
// d_t (guarded) at t, sqrt(d_t) at STEPS + t, B_t(a, t) (a > t) at 2 STEPS + a (a - 1) / 2 + t
#define PACKED_VALUES (2 * STEPS + STEPS * (STEPS - 1) / 2)
flat out vec4 PACKED[(PACKED_VALUES + 3) / 4];
#define SET(i, v) PACKED[(i) / 4][(i) % 4] = (v)

float guard(float d, int c) {
    if (guarded) {
        bool ok = d > tolerance * texelFetch(M0, ivec2(c, c), 0).r && !isinf(d) && !isnan(d);
        d = ok ? d : huge;
    }
    return d;
}

void main() {
    T0 = in_T0;
    T1 = in_T1;
    gl_Position = vec4(2.0 * V / viewport - 1.0, 0.0, 1.0);
    int s = min(STEPS, m - k);
    float B[STEPS * STEPS];
    for (int a = 0; a < STEPS; ++a)
        for (int b = 0; b <= a; ++b)
            B[a * STEPS + b] = a < s ? texelFetch(L, ivec2(k + b, k + a), 0).r : 1.0;
    for (int t = 0; t < STEPS; ++t) {
        float d = t < s ? guard(B[t * STEPS + t], k + t) : 1.0;
        SET(t, d);
        SET(STEPS + t, sqrt(d));
        for (int a = t + 1; a < STEPS; ++a)
            SET(2 * STEPS + a * (a - 1) / 2 + t, B[a * STEPS + t]);
        for (int a = t + 1; a < STEPS; ++a)
            for (int b = t + 1; b <= a; ++b)
                B[a * STEPS + b] = B[a * STEPS + b] - B[a * STEPS + t] * B[b * STEPS + t] / d;
    }
}
