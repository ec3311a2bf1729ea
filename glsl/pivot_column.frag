// The pivot column of step k of the outer-product Cholesky in one pass (beyond paper 000's
// Algorithm 2, whose steps 1-4 are square root, copy, normalization, copy): a rectangle over
// L(k, k) and the column below it; T0 is the (constant) pivot index. The pivot's fragment
// writes sqrt(L(k, k)); every other fragment divides its entry by that square root, computed
// again from the same texel (so no copy is needed between the two). With `guarded`, the
// interior-point safeguard of square_root_guarded.frag: a pivot not above `tolerance` times
// M0(k, k) (or not finite) is replaced by `huge`.
uniform sampler2D L;
uniform sampler2D M0;
uniform bool guarded;
uniform float tolerance;
uniform float huge;
out float result;

void main() {
    vec2 pivot_index = T0.xy;
    float pivot = texRECT(L, pivot_index);
    if (guarded) {
        bool ok = pivot > tolerance * texRECT(M0, pivot_index) && !isinf(pivot) && !isnan(pivot);
        pivot = ok ? pivot : huge;
    }
    float root = sqrt(pivot);
    bool on_pivot = all(equal(floor(WPOS), floor(pivot_index)));
    result = on_pivot ? root : texRECT(L, WPOS) / root;
}
