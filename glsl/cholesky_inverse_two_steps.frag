// Beyond the papers (issue 11): steps k and k + 1 of cholesky_inverse_step in one pass. Each
// fragment computes from the state S before step k what the two one-step passes would write,
// with the same float32 operations in the same order:
//   step k      d0 = S(k, k) (guarded),  S'(i, j) = S(i, j) - S(i, k) S(j, k) / d0   (j > k)
//   step k + 1  d1 = S'(k+1, k+1) (guarded), from the same state S',
// so the Cholesky half writes
//   L(k, k) = sqrt(d0),  L(i, k) = S(i, k) / sqrt(d0),
//   L(k+1, k+1) = sqrt(d1),  L(i, k+1) = S'(i, k+1) / sqrt(d1),
//   S''(i, j) = S'(i, j) - S'(i, k+1) S'(j, k+1) / d1                          (j > k + 1),
// and the inverse half (X beside it, columns m .. 2m-1)
//   X'(k, j) = X(k, j) / sqrt(d0),  X'(i, j) = X(i, j) - (S(i, k) / sqrt(d0)) X'(k, j)   (j <= k < i)
//   X''(k+1, j) = X'(k+1, j) / sqrt(d1),  X''(i, j) = X'(i, j) - (S'(i, k+1) / sqrt(d1)) X''(k+1, j)
//                                                                   (j <= k + 1 < i).
// Columns k - 2 and k - 1 of the factor and rows k - 2 and k - 1 of X, finished by the pass
// before, are copied (both textures of the ping-pong pair hold every finished part). At
// k = m - 1 (m odd) only step k is left: the fragments of step k + 1 are not drawn. Half the
// passes of cholesky_inverse_step, and half the fragments: the triangle and the rectangle of a
// pass are about those of one step.
uniform sampler2D L;
uniform sampler2D M0;
uniform int k;
uniform int m;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out float result;

float guard(float d, int c) {
    if (guarded) {
        bool ok = d > tolerance * texelFetch(M0, ivec2(c, c), 0).r && !isinf(d) && !isnan(d);
        d = ok ? d : huge;
    }
    return d;
}

float S(int i, int j) {                    // the state before step k: row i, column j
    return texelFetch(L, ivec2(j, i), 0).r;
}

// S'(i, j) after step k, for j > k (cholesky_step's update, the same operations)
float after_k(int i, int j, float d0) {
    return S(i, j) - S(i, k) * S(j, k) / d0;
}

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    int i = t.y;
    float d0 = guard(S(k, k), k);
    if (t.x < m) {                           // the Cholesky half
        int j = t.x;
        if (j < k) {                         // columns k - 2, k - 1: copied
            result = S(i, j);
            return;
        }
        if (j == k) {
            result = i == k ? sqrt(d0) : S(i, k) / sqrt(d0);
            return;
        }
        float d1 = guard(after_k(k + 1, k + 1, d0), k + 1);
        float lik1 = after_k(i, k + 1, d0);
        if (j == k + 1)
            result = i == k + 1 ? sqrt(d1) : lik1 / sqrt(d1);
        else
            result = after_k(i, j, d0) - lik1 * after_k(j, k + 1, d0) / d1;
        return;
    }
    int j = t.x - m;                         // the inverse half: X's column j
    if (i < k) {                             // rows k - 2, k - 1: copied
        result = texelFetch(L, t, 0).r;
        return;
    }
    float l0 = sqrt(d0);
    // X'(i, j) after step k (step k's region: columns 0 .. k)
    float xk = texelFetch(L, ivec2(t.x, k), 0).r / l0;
    if (i == k) {
        result = j <= k ? xk : texelFetch(L, t, 0).r;
        return;
    }
    float xi = j <= k ? texelFetch(L, t, 0).r - (S(i, k) / l0) * xk : texelFetch(L, t, 0).r;
    float xk1 = j <= k ? texelFetch(L, ivec2(t.x, k + 1), 0).r - (S(k + 1, k) / l0) * xk
                       : texelFetch(L, ivec2(t.x, k + 1), 0).r;
    float l1 = sqrt(guard(after_k(k + 1, k + 1, d0), k + 1));
    float x1 = xk1 / l1;
    result = i == k + 1 ? x1 : xi - (after_k(i, k + 1, d0) / l1) * x1;
}
