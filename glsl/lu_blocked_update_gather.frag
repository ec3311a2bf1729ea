// Beyond the papers (blocked LU): the trailing matrix's rank-b update with the panel's row swaps
// read through:
//     A22(r, c) = A(g(r), c) - sum over the panel's b columns p of L21(r, p) U12(p, c),
// g the panel's row gather (`perm`, a 1 x N row: g(r) is the row of A that the swaps bring to
// row r), so that the trailing square is swapped and updated in one pass (no gather pass over
// it first). One fragment a 2 x 2 block (pack_2x2's layout), drawn as a rectangle over the
// trailing blocks; L21 4 columns a texel (panel_rgba: texel (q, i) = L(c0 + i, c0 + 4q ..)),
// U12 4 rows a texel (panel_rows_rgba: texel (j, q) = U(c0 + 4q .., c0 + b + j)); b fetches,
// 4b multiply-adds.
uniform sampler2D A;
uniform sampler2D L;
uniform sampler2D U;
uniform sampler2D perm;
uniform int c0;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    int i = 2 * t.y - c0;
    int j = 2 * t.x - c0 - BLOCK;
    vec4 acc = vec4(0.0);
    for (int q = 0; q < BLOCK / 4; q++) {
        vec4 l0 = texelFetch(L, ivec2(q, i), 0);
        vec4 l1 = texelFetch(L, ivec2(q, i + 1), 0);
        vec4 u0 = texelFetch(U, ivec2(j, q), 0);
        vec4 u1 = texelFetch(U, ivec2(j + 1, q), 0);
        acc += vec4(dot(l0, u0), dot(l0, u1), dot(l1, u0), dot(l1, u1));
    }
    int r0 = int(texelFetch(perm, ivec2(2 * t.y, 0), 0).r);
    int r1 = int(texelFetch(perm, ivec2(2 * t.y + 1, 0), 0).r);
    vec4 a0 = texelFetch(A, ivec2(t.x, r0 / 2), 0);
    vec4 a1 = texelFetch(A, ivec2(t.x, r1 / 2), 0);
    result = vec4(r0 % 2 == 0 ? a0.xy : a0.zw, r1 % 2 == 0 ? a1.xy : a1.zw) - acc;
}
