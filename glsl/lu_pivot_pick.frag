// Beyond the papers (blocked LU, pivot on the GPU): the second stage of the pivot search of
// panel column k (drawn as one fragment at texel `at` of the record): of the `count` partial
// results of lu_panel_step_search (magnitude in column BLOCK, row in column BLOCK + 1 of the
// panel, one a row), the largest, the first of equals winning as in LAPACK's isamax; written
// as the record's (value, x, y, 0): |pivot|, the panel column k and the panel row.
uniform sampler2D S;
uniform int count;
uniform int k;
out vec4 result;

void main() {
    float best = texelFetch(S, ivec2(BLOCK, 0), 0).r;
    int m = 0;
    for (int q = 1; q < count; q++) {
        float v = texelFetch(S, ivec2(BLOCK, q), 0).r;
        if (v > best) {
            best = v;
            m = q;
        }
    }
    result = vec4(best, float(k), texelFetch(S, ivec2(BLOCK + 1, m), 0).r, 0.0);
}
