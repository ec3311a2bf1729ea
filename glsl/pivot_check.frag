// Breakdown detection on the GPU: fragment k of a vector reads the pivot L(k, k) (at T0) and
// returns k if it is not above `threshold` (0 for Cholesky: a non-positive pivot was
// square-rooted), or not finite, else a huge value; a min reduction then gives the first
// failing step. With `magnitude` it tests |pivot| > threshold instead (LU without pivoting,
// where threshold = n u max|A| marks the pivots that float32 cannot tell from zero).
uniform sampler2D L;
uniform bool magnitude;
uniform float threshold;
out float result;

void main() {
    float d = texRECT(L, T0.xy);
    if (magnitude) d = abs(d);
    bool ok = d > threshold && !isnan(d) && !isinf(d);
    result = ok ? 3.0e38 : floor(WPOS.x);
}
