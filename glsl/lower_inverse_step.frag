// Beyond the papers (issue 11: the substitutions were most of an interior point iteration's
// passes): step k of X = L^-1 for a lower triangular L, one pass, from the state before the
// step (S; X starts as the identity). Gauss-Jordan on [L | I] by columns of L: row k of X is
// divided by L(k, k), and L(i, k) times it is subtracted from every row i > k:
//     X(k, j) = S(k, j) / L(k, k),   X(i, j) = S(i, j) - L(i, k) S(k, j) / L(k, k)   (j <= k).
// Drawn over the rows i >= k, columns 0 .. k, joined with row k - 1 (finished the step before),
// which is copied, so that both textures of the ping-pong pair hold every finished row. After
// the m steps every solve with L L^T is two matrix-vector products instead of 2m passes.
uniform sampler2D S;
uniform sampler2D L;
uniform int k;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column j, row i)
    if (t.y < k) {                           // row k - 1: copied
        result = texelFetch(S, t, 0).r;
        return;
    }
    float xk = texelFetch(S, ivec2(t.x, k), 0).r / texelFetch(L, ivec2(k, k), 0).r;
    result = t.y == k ? xk : texelFetch(S, t, 0).r - texelFetch(L, ivec2(k, t.y), 0).r * xk;
}
