#version 330
// Beyond the papers: the vertex program of cholesky_step_ff and cholesky_inverse_step_ff
// (float_float.glsl and its extension come in after this line, from the kernel's library). pass.vert's work, and what every
// fragment of step k shares, computed once a vertex instead of once a fragment: the pivot
// d = S(k, k) of the state before step k (guarded: its high part above tolerance x M0(k, k), else
// huge), sqrt(d), and the reciprocals 1 / d and 1 / sqrt(d), handed to the fragments flat, so
// that they multiply where they divided.
uniform vec2 viewport;          // width and height of the target stream, in texels
uniform sampler2D L;
uniform sampler2D M0;
uniform int k;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
in vec2 V;
in vec3 in_T0;
in vec3 in_T1;
noperspective out vec3 T0;
noperspective out vec3 T1;
flat out vec4 PIVOT;            // d (hi, lo), sqrt(d) (hi, lo)
flat out vec4 RECIPROCALS;      // 1 / d (hi, lo), 1 / sqrt(d) (hi, lo)

void main() {
    T0 = in_T0;
    T1 = in_T1;
    gl_Position = vec4(2.0 * V / viewport - 1.0, 0.0, 1.0);
    vec2 d = texelFetch(L, ivec2(k, k), 0).rg;
    if (guarded) {
        bool ok = d.x > tolerance * texelFetch(M0, ivec2(k, k), 0).r && !isinf(d.x) && !isnan(d.x);
        d = ok ? d : vec2(huge, 0.0);
    }
    vec2 l = ff_sqrt(d);
    PIVOT = vec4(d, l);
    RECIPROCALS = vec4(ff_div(vec2(1.0, 0.0), d), ff_div(vec2(1.0, 0.0), l));
}
