// Beyond the papers (issue 11): step k of the one-pass Cholesky (cholesky_step) and step k of
// X = L^-1 (lower_inverse_step) in one pass, on a texture that holds both side by side: the
// Cholesky's working matrix in columns 0 .. m-1, X in columns m .. 2m-1. Both halves read the
// state before step k (L). The inverse's step needs column k of the factor, which this pass is
// writing; it computes it from the same state as the Cholesky half does, with the same float32
// operations, so that the X of this pass equals lower_inverse()'s from the finished factor bit
// for bit:
//     L(k, k) = sqrt(d),  L(i, k) = S(i, k) / sqrt(d)          (d = S(k, k), guarded as there),
//     X(k, j) = X(k, j) / L(k, k),  X(i, j) = X(i, j) - L(i, k) X(k, j) / L(k, k)   (j <= k < i).
// The primitive is cholesky_step's (the triangle of columns k .. i of rows i >= k, and the copy
// of column k - 1) joined with lower_inverse_step's moved m columns right (rows >= k, columns
// 0 .. k, and the copy of row k - 1). m + 1 passes for the factor and its inverse, not 2m.
uniform sampler2D L;
uniform sampler2D M0;
uniform int k;
uniform int m;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out float result;

float pivot() {
    float d = texelFetch(L, ivec2(k, k), 0).r;
    if (guarded) {
        bool ok = d > tolerance * texelFetch(M0, ivec2(k, k), 0).r && !isinf(d) && !isnan(d);
        d = ok ? d : huge;
    }
    return d;
}

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    if (t.x < m) {                           // the Cholesky half: cholesky_step
        if (t.x < k) {                       // column k - 1: copied
            result = texelFetch(L, t, 0).r;
            return;
        }
        float d = pivot();
        float lik = texelFetch(L, ivec2(k, t.y), 0).r;
        if (t.x == k)
            result = t.y == k ? sqrt(d) : lik / sqrt(d);
        else
            result = texelFetch(L, t, 0).r - lik * texelFetch(L, ivec2(k, t.x), 0).r / d;
        return;
    }
    if (t.y < k) {                           // the inverse half, row k - 1: copied
        result = texelFetch(L, t, 0).r;
        return;
    }
    float lkk = sqrt(pivot());
    float xk = texelFetch(L, ivec2(t.x, k), 0).r / lkk;
    result = t.y == k ? xk : texelFetch(L, t, 0).r - (texelFetch(L, ivec2(k, t.y), 0).r / lkk) * xk;
}
