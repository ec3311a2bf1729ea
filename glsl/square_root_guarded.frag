// Square rooting with the interior-point safeguard (an extension beyond the papers; Wright
// 1997, ch. 11): a pivot that is not above `tolerance` times the diagonal entry M0(k, k) of
// the matrix being factored (tiny, zero or negative near the optimum, or not finite) is
// replaced by `huge`, so that its column normalizes to about zero and the matching component
// of the solution vanishes, instead of the factorization breaking down.
uniform sampler2D L;
uniform sampler2D M0;
uniform float tolerance;
uniform float huge;
out float result;

void main() {
    vec2 index = WPOS;
    float pivot = texRECT(L, index.xy);
    bool ok = pivot > tolerance * texRECT(M0, index.xy) && !isinf(pivot) && !isnan(pivot);
    result = sqrt(ok ? pivot : huge);
}
