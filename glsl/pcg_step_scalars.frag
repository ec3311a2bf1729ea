// PCG's scalars of one iteration in a 2 x 1 RGBA texture (beyond 002, whose CPU held them):
//     texel 0: (p^T q, gamma = r^T z, watch, ||r||^2)   what a check reads back
//     texel 1: (alpha = gamma / p^T q, iterations, 0, 0)
// p^T q = sum of the curvature sums' row 0 + delta times the sum of row 1. The watch is -1
// until the first iteration whose p^T q or gamma is not positive (or not finite), then that
// iteration's number (the count carried in texel 1). alpha is 0 there: x and r stay.
uniform sampler2D C;        // pcg_curvature_sums
uniform sampler2D Z;        // pcg_chunk_totals
uniform sampler2D Prev;     // the scalars of the iteration before
uniform int n_chunks;
uniform int m_chunks;
uniform int k;
uniform float delta;
out vec4 result;

void main() {
    float tn = 0.0, tm = 0.0;
    for (int j = 0; j < n_chunks; ++j) tn += texelFetch(C, ivec2(j, 0), 0).r;
    for (int j = 0; j < m_chunks; ++j) tm += texelFetch(C, ivec2(j, 1), 0).r;
    float pq = tn + delta * tm;
    float gamma = texelFetch(Z, ivec2(k, 0), 0).r;
    float rr = texelFetch(Z, ivec2(k + 2, 0), 0).r;
    vec4 before = texelFetch(Prev, ivec2(0, 0), 0);
    float count = texelFetch(Prev, ivec2(1, 0), 0).g;
    bool good = pq > 0.0 && pq < 3.0e38 && gamma > 0.0 && gamma < 3.0e38;
    float watch = before.b >= 0.0 ? before.b : (good ? -1.0 : count);
    float alpha = good ? gamma / pq : 0.0;
    if (!(abs(alpha) < 3.0e38)) alpha = 0.0;
    result = int(WPOS.x) == 0 ? vec4(pq, gamma, watch, rr) : vec4(alpha, count + 1.0, 0.0, 0.0);
}
