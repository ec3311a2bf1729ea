// The safeguard of a split free variable v = x+ - x- (beyond paper 000; interior point codes
// bound the split this way): both halves are lowered by the same amount so that
// min(x+, x-) <= bound (1 + |x+ - x-|). v, hence A x, is unchanged; without it x+ and x- can
// grow together without limit and Theta = x / s with them. `partner` holds, for each entry,
// the index of the other half of its split (-1: not split); T0 is not used.
uniform sampler2D X;
uniform sampler2D partner;
uniform float bound;
out float result;

void main() {
    float xj = texRECT(X, WPOS);
    float p = texRECT(partner, WPOS);
    if (p < 0.0) {
        result = xj;
        return;
    }
    float xo = texRECT(X, vec2(p + 0.5, 0.5));
    result = xj - max(min(xj, xo) - bound * (1.0 + abs(xj - xo)), 0.0);
}
