#version 330
// FSATY, x = A^T y, from the one row-wise (ELLPACK or transposed ELLPACK) copy of A: a point
// per stored entry, drawn with additive blending. Vertex gl_VertexID is entry k of row i; the
// vertex shader fetches a(i, k), its column j and y(i) from textures and places the point on
// texel j of the folded x, carrying a(i, k) y(i): the rasterizer scatters, the blender sums.
// (Paper 002, section 3.1: with a single copy the product with A^T needs a reduction over
// rows; this is how the graphics pipeline does it without a second copy.)
uniform sampler2D values;
uniform sampler2D columns;
uniform sampler2D Y;
uniform int K;              // entries per row
uniform int fold;           // row width of the folded y (and of the ELLPACK layout)
uniform int y_width;
uniform int x_width;
uniform bool transposed;    // entries down texture columns (TELL) instead of along rows
uniform vec2 viewport;
flat out float contribution;
noperspective out vec3 T0;
noperspective out vec3 T1;

void main() {
    int k = gl_VertexID % K;
    int i = gl_VertexID / K;
    ivec2 entry = transposed ? ivec2(i % fold, (i / fold) * K + k) : ivec2((i / fold) * K + k, i % fold);
    float a = texelFetch(values, entry, 0).r;
    int j = int(texelFetch(columns, entry, 0).r);
    contribution = a * texelFetch(Y, ivec2(i % y_width, i / y_width), 0).r;
    vec2 texel = vec2(j % x_width, j / x_width) + 0.5;
    gl_Position = vec4(2.0 * texel / viewport - 1.0, 0.0, 1.0);
    if (j < 0)                  // ELLPACK's padding (column -1): outside the viewport, clipped
        gl_Position = vec4(2.0, 2.0, 0.0, 1.0);
    gl_PointSize = 1.0;
    T0 = vec3(0.0);
    T1 = vec3(0.0);
}
