// Beyond the papers (issue 13, blocked LU): step k of U12 = L11^-1 A12 on the row panel U
// (b rows, R32F), with the unit lower L11 from the factored column panel L: rows below k
//     U(i, c) -= L(i, k) U(k, c),
// the other rows copied (one pass over the whole row panel a step, so S and T stay whole).
uniform sampler2D U;
uniform sampler2D L;
uniform int k;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));
    float u = texelFetch(U, t, 0).r;
    if (t.y > k) u -= texelFetch(L, ivec2(k, t.y), 0).r * texelFetch(U, ivec2(t.x, k), 0).r;
    result = u;
}
