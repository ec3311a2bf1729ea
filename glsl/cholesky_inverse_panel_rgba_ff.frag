// Beyond the papers: cholesky_inverse_panel_rgba.frag in float-float, two of the block's columns
// a texel (hi, lo, hi, lo). Fragment (q, r) of the RGBA32F target, 2m rows high:
//     r < m:       (L(r, c), L(r, c + 1)),  c = k0 + 2q      (row r of the panel)
//     r = m + j:   (X(c, j), X(c + 1, j))                    (column j of X's block rows)
// the columns from k1 on zero; the joined texture as in cholesky_inverse_step_ff (hi in .r, lo in .g).
uniform sampler2D L;
uniform int k0;                 // the block's first column
uniform int k1;                 // one past its last
uniform int m;
out vec4 result;

vec2 entry(ivec2 at, int c) {            // the texel at `at`, zero past the block
    return c < k1 ? texelFetch(L, at, 0).rg : vec2(0.0);
}

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (q, r)
    int c = k0 + 2 * t.x;
    ivec2 at = t.y < m ? ivec2(c, t.y) : ivec2(t.y, c);    // L(r, c) or X(c, r - m)
    ivec2 next = t.y < m ? ivec2(1, 0) : ivec2(0, 1);
    result = vec4(entry(at, c), entry(at + next, c + 1));
}
