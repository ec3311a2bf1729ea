#version 330
// Beyond the papers: the vertex program of cholesky_inverse_steps_ff, cholesky_block_pivots.vert
// in float-float arithmetic (float_float.glsl and its extension come in after this line, from the
// kernel's library). pass.vert's work, and what every fragment of the pass needs and all of them
// share: each vertex fetches the diagonal block B = S(k .. k+s-1, k .. k+s-1) of the state S
// before step k, replays the s steps on it with cholesky_inverse_step_ff's operations,
//   step k + t   d_t = B_t(t, t) (guarded: its high part above tolerance x M0(k+t, k+t)),
//                B_{t+1}(a, b) = B_t(a, b) - (B_t(a, t) B_t(b, t)) (1 / d_t)      (a >= b > t),
// and hands sqrt(d_t), the reciprocals 1 / d_t and 1 / sqrt(d_t) (computed once here, so that the
// fragments multiply where they would divide, as cholesky_pivot_ff.vert does for one step) and the
// column B_t(a, t), a > t, to the fragments as flat values, each a float-float pair (hi, lo).
// s = min(STEPS, m - k); the loops have constant bounds. The 3 STEPS + STEPS (STEPS - 1) / 2 pairs
// go packed four floats a vec4 (13 vec4 at STEPS = 5), within OpenGL 3.3's guaranteed 15 varying
// vectors with T0 and T1.
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
// sqrt(d_t) (d_t guarded) at pair t, 1 / d_t at STEPS + t, 1 / sqrt(d_t) at 2 STEPS + t, B_t(a, t)
// (a > t) at 3 STEPS + a (a - 1) / 2 + t; pair i is floats 2i (hi) and 2i + 1 (lo)
#define PACKED_VALUES (3 * STEPS + STEPS * (STEPS - 1) / 2)
flat out vec4 PACKED[(2 * PACKED_VALUES + 3) / 4];
#define SET_FLOAT(i, v) PACKED[(i) / 4][(i) % 4] = (v)
#define SET(i, v) { vec2 pair_ = (v); SET_FLOAT(2 * (i), pair_.x); SET_FLOAT(2 * (i) + 1, pair_.y); }

vec2 guard(vec2 d, int c) {
    if (guarded) {
        bool ok = d.x > tolerance * texelFetch(M0, ivec2(c, c), 0).r && !isinf(d.x) && !isnan(d.x);
        d = ok ? d : vec2(huge, 0.0);
    }
    return d;
}

void main() {
    T0 = in_T0;
    T1 = in_T1;
    gl_Position = vec4(2.0 * V / viewport - 1.0, 0.0, 1.0);
    int s = min(STEPS, m - k);
    vec2 B[STEPS * STEPS];
    for (int a = 0; a < STEPS; ++a)
        for (int b = 0; b <= a; ++b)
            B[a * STEPS + b] = a < s ? texelFetch(L, ivec2(k + b, k + a), 0).rg : vec2(1.0, 0.0);
    for (int t = 0; t < STEPS; ++t) {
        vec2 d = t < s ? guard(B[t * STEPS + t], k + t) : vec2(1.0, 0.0);
        vec2 l = ff_sqrt(d);
        vec2 inv_d = ff_div(vec2(1.0, 0.0), d);
        SET(t, l);
        SET(STEPS + t, inv_d);
        SET(2 * STEPS + t, ff_div(vec2(1.0, 0.0), l));
        for (int a = t + 1; a < STEPS; ++a)
            SET(3 * STEPS + a * (a - 1) / 2 + t, B[a * STEPS + t]);
        for (int a = t + 1; a < STEPS; ++a)
            for (int b = t + 1; b <= a; ++b)
                B[a * STEPS + b] = ff_sub(B[a * STEPS + b], ff_mul(ff_mul(B[a * STEPS + t], B[b * STEPS + t]), inv_d));
    }
}
