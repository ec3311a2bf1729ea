// Beyond the papers (blocked LU, pivot on the GPU): a whole step k of LU-GPU (paper 004) on the
// column panel in one pass, from the state before the step (A), with the first stage of the
// next column's pivot search drawn in the same pass, so that a panel column costs two passes
// (this one and lu_pivot_pick). The panel texture is b + 2 columns wide.
// Columns 0 .. b-1: the row swap k <-> p (p from texel `at` of the pivot record, (value, x, y,
// 0), y the panel row), the row of U, the normalized column and the elimination -- the swap's
// two passes, the normalization, its copy and the elimination of the faithful step, with the
// same float32 operations:
//     L(i, k) = A(i', k) / A(p, k),   A(i, j) = A(i', j) - L(i, k) A(p, j)   (i > k, j > k),
// i' the row that the swap brings to row i. The rectangle covers rows k-1 .. R-1 and all b
// columns (the swap moves whole panel rows); row k - 1, finished at the step before, is copied,
// so both textures of the ping-pong pair hold every finished row.
// Columns b, b + 1: fragment (b + h, m) searches rows k+1+FAN1 m .. k+FAN1 (m+1) (< `rows`) of
// column k + 1 AFTER this step, each value computed as the step's own fragment computes it,
//     v(i) = A(i', k+1) - [A(i', k) / A(p, k)] A(p, k+1),
// and writes the largest |v(i)| (the first of equals) as its magnitude (h = 0) or its row (h = 1).
uniform sampler2D A;
uniform sampler2D record;
uniform int k;
uniform int at;
uniform int rows;                        // R, the panel's rows
out float result;

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column j, row i)
    int p = int(texelFetch(record, ivec2(at, 0), 0).z);
    if (t.x >= BLOCK) {                      // the next column's pivot search, first stage
        int i0 = k + 1 + FAN1 * t.y;
        float piv = texelFetch(A, ivec2(k, p), 0).r;
        float pk1 = texelFetch(A, ivec2(k + 1, p), 0).r;
        float best = -1.0;
        int where = i0;
        for (int q = 0; q < FAN1; q++) {
            int i = i0 + q;
            if (i >= rows) break;
            int src = i == p ? k : i;
            float l = texelFetch(A, ivec2(k, src), 0).r / piv;
            float v = abs(texelFetch(A, ivec2(k + 1, src), 0).r - l * pk1);
            if (v > best) {
                best = v;
                where = i;
            }
        }
        result = t.x == BLOCK ? best : float(where);
        return;
    }
    if (t.y < k) {                           // row k - 1: copied
        result = texelFetch(A, t, 0).r;
        return;
    }
    int src = t.y == k ? p : (t.y == p ? k : t.y);
    float a = texelFetch(A, ivec2(t.x, src), 0).r;
    if (t.x < k || t.y == k) {               // earlier L columns (swapped) and the row of U
        result = a;
        return;
    }
    float l = texelFetch(A, ivec2(k, src), 0).r / texelFetch(A, ivec2(k, p), 0).r;
    result = t.x == k ? l : a - l * texelFetch(A, ivec2(t.x, p), 0).r;
}
