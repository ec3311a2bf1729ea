// Forward / backward substitution (paper 000, level 2) in the inner-product form, one pass per
// step k: x_k = (b_k - sum_j T(k, j) x_j) / T(k, k) over the finished j (j < k forward, j > k
// backward), each term an inner product along row k of T (by_rows: of Tᵀ, i.e. down column k
// of T, read through the swizzle .yx); every other fragment copies its entry, so the target
// holds all of x after the pass and the ping-pong needs no copy. T(i, j) lives at texel (j, i).
uniform sampler2D X;        // b, with the finished x_j in place
uniform sampler2D T;
uniform int k;
uniform int n;
uniform bool forward;
uniform bool by_rows;       // solve with Tᵀ
uniform bool unit_diagonal;
out float result;

void main() {
    float xi = texRECT(X, WPOS);
    if (int(WPOS.x) != k) {
        result = xi;
        return;
    }
    int j0 = forward ? 0 : k + 1;
    int j1 = forward ? k : n;
    float sum = xi;
    for (int j = j0; j < j1; j++) {
        vec2 kj = vec2(float(j) + 0.5, float(k) + 0.5);      // texel of T(k, j)
        sum -= texRECT(T, by_rows ? kj.yx : kj) * texRECT(X, vec2(float(j) + 0.5, 0.5));
    }
    result = unit_diagonal ? sum : sum / texRECT(T, vec2(float(k) + 0.5, float(k) + 0.5));
}
