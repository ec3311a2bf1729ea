// Breakdown detection on the GPU: fragment k of a vector reads the pivot L(k, k) (at T0) and
// returns k if it is not a positive number (a non-positive pivot was square-rooted, or a
// zero pivot divided), else a huge value; a min reduction then gives the first failing step.
// With `magnitude` it tests |pivot| > 0 instead (LU without pivoting).
uniform sampler2D L;
uniform bool magnitude;
out float result;

void main() {
    float d = texRECT(L, T0.xy);
    if (magnitude) d = abs(d);
    bool ok = d > 0.0 && !isnan(d) && !isinf(d);
    result = ok ? 3.0e38 : floor(WPOS.x);
}
