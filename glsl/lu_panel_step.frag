// Beyond the papers (blocked LU, pivot on the GPU): a whole step k of LU-GPU (paper 004) on the
// column panel in one pass, from the state before the step (A): the row swap k <-> p (p from
// texel `at` of the pivot record, (value, x, y, 0), y the panel row), the row of U, the
// normalized column and the elimination -- the swap's two passes, the normalization, its copy
// and the elimination of the faithful step, with the same float32 operations:
//     L(i, k) = A(i', k) / A(p, k),   A(i, j) = A(i', j) - L(i, k) A(p, j)   (i > k, j > k),
// i' the row that the swap brings to row i. The rectangle covers rows k-1 .. R-1 and all b
// columns (the swap moves whole panel rows); row k - 1, finished at the step before, is copied,
// so both textures of the ping-pong pair hold every finished row.
uniform sampler2D A;
uniform sampler2D record;
uniform int k;
uniform int at;
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column j, row i)
    if (t.y < k) {                           // row k - 1: copied
        result = texelFetch(A, t, 0).r;
        return;
    }
    int p = int(texelFetch(record, ivec2(at, 0), 0).z);
    int src = t.y == k ? p : (t.y == p ? k : t.y);
    float a = texelFetch(A, ivec2(t.x, src), 0).r;
    if (t.x < k || t.y == k) {               // earlier L columns (swapped) and the row of U
        result = a;
        return;
    }
    float l = texelFetch(A, ivec2(k, src), 0).r / texelFetch(A, ivec2(k, p), 0).r;
    result = t.x == k ? l : a - l * texelFetch(A, ivec2(t.x, p), 0).r;
}
