// Beyond the papers (issue 13, blocked LU): gather whole rows of a 2 x 2-block RGBA32F texture
// (pack_2x2's layout) through a permutation texture: row r of the target is row perm(r) of A.
// `perm` has one row per group of `group` columns (0: one row for all): element (r, p) is the
// source row of row r in the columns of group p (the deferred row swaps of the panels).
uniform sampler2D A;
uniform sampler2D perm;
uniform int group;
out vec4 result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    int p = group > 0 ? (2 * t.x) / group : 0;
    int r0 = int(texelFetch(perm, ivec2(2 * t.y, p), 0).r);
    int r1 = int(texelFetch(perm, ivec2(2 * t.y + 1, p), 0).r);
    vec4 a = texelFetch(A, ivec2(t.x, r0 / 2), 0);
    vec4 b = texelFetch(A, ivec2(t.x, r1 / 2), 0);
    result = vec4(r0 % 2 == 0 ? a.xy : a.zw, r1 % 2 == 0 ? b.xy : b.zw);
}
