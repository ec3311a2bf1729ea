#version 330
// Point i on texel (i, i): the diagonal of a square matrix, placed from gl_VertexID (one pass of
// m points, no vertex buffer). Used with additive blending to add delta I to A D^2 A^T (the dual
// regularisation R_d of paper 002, (6)).
uniform vec2 viewport;
noperspective out vec3 T0;
noperspective out vec3 T1;

void main() {
    vec2 texel = vec2(float(gl_VertexID)) + 0.5;
    gl_Position = vec4(2.0 * texel / viewport - 1.0, 0.0, 1.0);
    gl_PointSize = 1.0;
    T0 = vec3(0.0);
    T1 = vec3(0.0);
}
