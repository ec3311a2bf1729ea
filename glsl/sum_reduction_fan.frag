// One pass of the fan sum reduction (beyond the papers: 000's level-1 sum and 003's Fig. 3
// add pairs; this adds FAN texels per fragment, so a length n takes ceil(log_FAN n) passes
// instead of ceil(log2 n)). Fragment i of the output adds the input texels FAN i .. FAN i +
// FAN - 1 along `step` ((1, 0): along rows; (0, 1): down columns). The rasterizer
// interpolates the first of them into T0 (T0 = FAN WPOS - (FAN - 1) / 2 along the axis, the
// halving pass's 2 WPOS - 0.5 for FAN = 2); texels at or past `limit` lie beyond the input
// and count as the identity, 0.0.
uniform sampler2D S;
uniform vec2 limit;     // first (x, y) past the input region
uniform vec2 step;      // (1, 0) or (0, 1)
out float result;

void main() {
    float sum = 0.0;
    for (int i = 0; i < FAN; i++) {
        vec2 c = T0.xy + float(i) * step;
        if (all(lessThan(c, limit)))
            sum += texRECT(S, c);
    }
    result = sum;
}
