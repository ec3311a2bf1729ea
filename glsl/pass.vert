#version 330
// The one vertex program of the project. A vertex is a window position V, in texel units of
// the target stream (x = column, y = row, origin at the corner of the first element), with two
// texture-coordinate sets T0 and T1 (TEXCOORD0 and TEXCOORD1 of the papers). The rasterizer
// interpolates T0 and T1 linearly across the primitive ("noperspective"), which is how the
// papers generate the indexes a kernel fetches with.
uniform vec2 viewport;          // width and height of the target stream, in texels
in vec2 V;
in vec3 in_T0;
in vec3 in_T1;
noperspective out vec3 T0;
noperspective out vec3 T1;

void main() {
    T0 = in_T0;
    T1 = in_T1;
    gl_Position = vec4(2.0 * V / viewport - 1.0, 0.0, 1.0);
}
