#version 330
// LU-GPU's row (or column) swap, with the pivot's position read on the GPU (beyond the papers,
// issue 13): paper 004 reads the pivot back to the CPU at every step to place the two lines of
// the "parallel data transfer"; here the vertex program places them itself from the 1 x 1
// RGBA result of the argmax reduction (value, x, y, 0), so the CPU issues the passes without
// waiting for the GPU (vertex texture fetch, core in OpenGL 3.3). The pivot is read at texel
// (at, 0): of the 1 x 1 argmax result, or of the 1 x n record of pivots that the argmax's last
// pass renders into at step k.
//
// Four vertices, two lines, exactly as gpgpu.lu.swap_lines builds them on the CPU: line 0 on
// row k reading row p, line 1 on row p reading row k, each from the centre of texel 0 to the
// centre of texel `length` (the diamond-exit rule shades texels 0 .. length-1). With `back`
// each line reads its own texels (the copy back). Columns alike with x and y exchanged. When
// p == k both lines lie on row k and copy it onto itself. (The lines may swap the entries of a
// row vector by the pivot's row: pivot_row and rows are separate uniforms.) Six vertices add a
// third line, column k below the diagonal (rows k+1 .. length-1), read in place: LU's
// normalized column, written with the swap by swap_normalization.frag and copied back with it.
uniform sampler2D pivot;
uniform vec2 viewport;
uniform int k;
uniform int length;
uniform bool rows;
uniform bool back;
uniform int shift;          // added to the pivot's index (a panel's rows in a longer vector)
uniform bool pivot_row;     // the pivot's row index (y) places the lines, else its column (x)
uniform int at;             // the pivot's texel (at, 0): 0 for an argmax result, k in a record
noperspective out vec3 T0;
noperspective out vec3 T1;

void main() {
    vec4 p = texelFetch(pivot, ivec2(at, 0), 0);
    float other = (pivot_row ? p.z : p.y) + float(shift);   // the pivot's row (y) or column (x)
    int line = gl_VertexID / 2;
    float on = line == 0 ? float(k) : other;                // the line's row (or column)
    float from = back ? on : (line == 0 ? other : float(k));
    float s = gl_VertexID % 2 == 0 ? 0.5 : float(length) + 0.5;
    vec2 V = rows ? vec2(s, on + 0.5) : vec2(on + 0.5, s);
    T0 = rows ? vec3(s, from + 0.5, 0.0) : vec3(from + 0.5, s, 0.0);
    if (line == 2) {            // six vertices: a third line, column k below the diagonal (rows
                                // k+1 .. length-1) copied in place (LU's normalized column)
        s = gl_VertexID % 2 == 0 ? float(k) + 1.5 : float(length) + 0.5;
        V = vec2(float(k) + 0.5, s);
        T0 = vec3(V, 0.0);
    }
    T1 = vec3(0.0);
    gl_Position = vec4(2.0 * V / viewport - 1.0, 0.0, 1.0);
}
