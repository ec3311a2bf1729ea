// Beyond the papers (issue 13): the rank-b update of the trailing matrix, one fragment a 2 x 2
// block (RGBA32F, pack_2x2's layout), drawn as the oversized triangle of Fig. 5 of 001 over
// the block texture. Fragment (X, Y) updates rows 2Y, 2Y+1 and columns 2X, 2X+1:
//     A(r, c) -= sum over the panel's b columns p of L(r, p) L(c, p),
// with the panel 4 columns a texel (panel_rgba: texel (q, i) = L(c0 + i, c0 + 4q .. 4q+3)):
// b texel fetches and 4b multiply-adds a fragment, where the faithful kernel does 1.
uniform sampler2D A;
uniform sampler2D P;
uniform int c0;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    int i = 2 * t.y - c0;                    // panel rows of the block's two rows and two columns
    int j = 2 * t.x - c0;
    vec4 acc = vec4(0.0);
    for (int q = 0; q < BLOCK / 4; q++) {
        vec4 r0 = texelFetch(P, ivec2(q, i), 0);
        vec4 r1 = texelFetch(P, ivec2(q, i + 1), 0);
        vec4 s0 = texelFetch(P, ivec2(q, j), 0);
        vec4 s1 = texelFetch(P, ivec2(q, j + 1), 0);
        acc += vec4(dot(r0, s0), dot(r0, s1), dot(r1, s0), dot(r1, s1));
    }
    result = texelFetch(A, t, 0) - acc;
}
