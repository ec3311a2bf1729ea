// Beyond the papers: the block's panel packed four columns a texel for the trailing pass of the
// blocked factor with its inverse (as panel_rgba packs the blocked Cholesky's panel). Fragment
// (q, r) of the RGBA32F target, 2m rows high:
//     r < m:       (L(r, c), L(r, c + 1), L(r, c + 2), L(r, c + 3)),  c = k0 + 4q   (row r of the panel)
//     r = m + j:   (X(c, j), X(c + 1, j), X(c + 2, j), X(c + 3, j))                (column j of X's block rows)
// so that both factors of every term of the trailing pass sit in one row of this texture; the
// columns from k1 on are zero. The joined texture holds L in columns 0 .. m-1 and X(c, j) at
// (m + j, c), as in cholesky_inverse_step.
uniform sampler2D L;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
out vec4 result;

float entry(ivec2 at, int c) {           // the texel at `at`, zero past the block
    return c < k1 ? texelFetch(L, at, 0).r : 0.0;
}

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (q, r)
    int c = k0 + 4 * t.x;
    ivec2 at = t.y < m ? ivec2(c, t.y) : ivec2(t.y, c);    // L(r, c) or X(c, r - m)
    ivec2 next = t.y < m ? ivec2(1, 0) : ivec2(0, 1);       // along the row, or down the column
    result = vec4(entry(at, c), entry(at + next, c + 1), entry(at + 2 * next, c + 2), entry(at + 3 * next, c + 3));
}
