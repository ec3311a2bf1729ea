// The safeguard of a split free variable v = x+ - x- (beyond paper 000; interior point codes
// bound the split this way): both halves are lowered by the same amount so that
// min(x+, x-) <= bound (1 + |x+ - x-|), but neither below centring / s of its own (a fraction
// of mu: a half far below its centred value mu / s blocks the dual step; 0 leaves it out).
// v, hence A x, is unchanged; without it x+ and x- can grow together without limit and
// Theta = x / s with them. `partner` holds, for each entry, the index of the other half of its
// split (-1: not split); T0 is not used.
uniform sampler2D X;
uniform sampler2D S;
uniform sampler2D partner;
uniform float bound;
uniform float centring;   // floor: a fraction of mu
out float result;

void main() {
    float xj = texRECT(X, WPOS);
    float p = texRECT(partner, WPOS);
    if (p < 0.0) {
        result = xj;
        return;
    }
    vec2 other = vec2(p + 0.5, 0.5);
    float xo = texRECT(X, other);
    float lower = min(xj, xo) - bound * (1.0 + abs(xj - xo));
    if (centring > 0.0)
        lower = min(lower, min(xj - centring / texRECT(S, WPOS), xo - centring / texRECT(S, other)));
    result = xj - max(lower, 0.0);
}
