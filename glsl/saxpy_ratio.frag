// saxpy whose scalar is a ratio of two 1 x 1 streams: y + sign * (n / d) * x. PCG's step lengths
// alpha = r^T z / p^T q and beta = r'^T z' / r^T z (002 section 2.1, [9]) stay on the GPU, where
// the sum reductions left the inner products: no read-back between the passes (beyond 002,
// whose CPU computed them). A ratio that is not finite (0 / 0 once r has reached 0 between two
// of PCG's read-backs, when x is 0 too) counts as 0: the iterate then stays where it is.
uniform sampler2D X;
uniform sampler2D Y;
uniform sampler2D N;
uniform sampler2D D;
uniform float sign;
out float result;

void main() {
    float d = texelFetch(D, ivec2(0, 0), 0).r;
    float ratio = d == 0.0 ? 0.0 : texelFetch(N, ivec2(0, 0), 0).r / d;
    if (!(abs(ratio) < 3.0e38)) ratio = 0.0;      // inf and NaN (where isnan may not see it)
    result = sign * ratio * texRECT(X, WPOS) + texRECT(Y, WPOS);
}
