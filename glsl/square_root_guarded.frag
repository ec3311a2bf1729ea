// Square rooting with the interior-point safeguard (an extension beyond the papers; Wright
// 1997, ch. 11): a pivot at or below `tolerance` (tiny, zero or negative near the optimum)
// is replaced by `huge`, so that its column normalizes to about zero and the corresponding
// component of the solution vanishes, instead of the factorization breaking down.
uniform sampler2D L;
uniform float tolerance;
uniform float huge;
out float result;

void main() {
    vec2 index = WPOS;
    float pivot = texRECT(L, index.xy);
    result = pivot > tolerance ? sqrt(pivot) : huge;
}
