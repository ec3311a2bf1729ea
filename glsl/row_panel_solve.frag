// Beyond the papers (blocked LU): U12 = L11^-1 A12 on the row panel U (b rows, R32F) in one
// pass, with the unit lower L11 read from the factored panel 4 columns a texel (L4, panel_rgba:
// texel (q, i) = L(i, 4q .. 4q+3)), so that a row of L11 costs ceil(i / 4) fetches, not i:
// fragment (c, r) runs the forward substitution of its column down to row r,
//     u(i) = U(i, c) - sum over k < i of L(i, k) u(k),   i = 0 .. r,
// the same operations in the same order as b - 1 elimination steps drawn pass by pass (k
// ascending; the components of a texel at or right of the diagonal, U11's, are not used).
uniform sampler2D U;
uniform sampler2D L4;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    float u[BLOCK];
    for (int i = 0; i <= t.y; i++) {
        float v = texelFetch(U, ivec2(t.x, i), 0).r;
        for (int k = 0; k < i; k += 4) {
            vec4 l = texelFetch(L4, ivec2(k / 4, i), 0);
            v -= l.x * u[k];
            if (k + 1 < i) v -= l.y * u[k + 1];
            if (k + 2 < i) v -= l.z * u[k + 2];
            if (k + 3 < i) v -= l.w * u[k + 3];
        }
        u[i] = v;
    }
    result = u[t.y];
}
