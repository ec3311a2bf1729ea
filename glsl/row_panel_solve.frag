// Beyond the papers (blocked LU): U12 = L11^-1 A12 on the row panel U (b rows, R32F) in one
// pass, with the unit lower L11 from the factored column panel L: fragment (c, r) runs the
// forward substitution of its column down to row r,
//     u(i) = U(i, c) - sum over k < i of L(i, k) u(k),   i = 0 .. r,
// the same operations in the same order as the b - 1 passes of row_panel_elimination.
uniform sampler2D U;
uniform sampler2D L;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    float u[BLOCK];
    for (int i = 0; i <= t.y; i++) {
        float v = texelFetch(U, ivec2(t.x, i), 0).r;
        for (int k = 0; k < i; k++)
            v -= texelFetch(L, ivec2(k, i), 0).r * u[k];
        u[i] = v;
    }
    result = u[t.y];
}
