// PCG's scalars of one iteration in a 1 x (2 + k4) RGBA texture (beyond 002, whose CPU held them):
//     texel 0: (p^T q, gamma = r^T z, watch, ||r||^2)   what a check reads back
//     texel 1: (alpha = gamma / p^T q, iterations, 0, 0)
//     texel 2 + b: the updated residual at the pivots K_4b .. K_4b+3, r - alpha q there (0 past
//              the k-th), as pcg_update_forward computes it: what the next iteration's
//              pcg_update_forward, pcg_chunk_sums and pcg_chunk_totals read four a texel
// p^T q = the total of the curvature sums' n part + delta times the total of their m part. The
// watch is -1 until the first iteration whose p^T q or gamma is not positive (or not finite),
// then that iteration's number (the count carried in texel 1). alpha is 0 there: x and r stay.
uniform sampler2D C;        // the curvature sums (sparse_ellpack_four with CURVATURE): sum a at
                            // texel (a % sums_width, sums_row + a / sums_width)
uniform sampler2D Z;        // pcg_chunk_totals
uniform sampler2D Prev;     // the scalars of the iteration before
uniform sampler2D XR;       // PCG's state this iteration (pcg_update_forward's): (x hi, x lo, r, 0)
uniform sampler2D P;        // the direction
uniform sampler2D Y;        // A Theta~ A^T p
uniform sampler2D Kpos;     // the entry numbers K_i (1 x k)
uniform int sums_row;
uniform int sums_width;
uniform int m_first;        // the first of the m part's sums
uniform int n_chunks;
uniform int m_chunks;
uniform int k;
uniform int width;          // row width of the folded vectors
uniform float delta;
out vec4 result;

const int GROUP = 4;        // texels whose fetches are in flight together

float updated(int i, float alpha) {     // r(K_i) - alpha q(K_i), 0 past the k-th
    if (i >= k)
        return 0.0;
    int e = int(texelFetch(Kpos, ivec2(i, 0), 0).r);
    ivec2 t = ivec2(e % width, e / width);
    float r = texelFetch(XR, t, 0).b;
    if (alpha == 0.0)
        return r;
    float p = texelFetch(P, t, 0).r;
    float q = texelFetch(Y, t, 0).r + delta * p;
    return r - alpha * q;
}

float sums_total(int first, int count) {   // sums first .. first + count - 1, GROUP fetches at a time
    float sum = 0.0;
    int a = first;
    for (; a + GROUP <= first + count; a += GROUP) {
        float part[GROUP];
        for (int g = 0; g < GROUP; ++g)
            part[g] = texelFetch(C, ivec2((a + g) % sums_width, sums_row + (a + g) / sums_width), 0).r;
        for (int g = 0; g < GROUP; ++g)
            sum += part[g];
    }
    for (; a < first + count; ++a)
        sum += texelFetch(C, ivec2(a % sums_width, sums_row + a / sums_width), 0).r;
    return sum;
}

void main() {
    float tn = sums_total(0, n_chunks), tm = sums_total(m_first, m_chunks);
    float pq = tn + delta * tm;
    float gamma = texelFetch(Z, ivec2(k, 0), 0).r;
    float rr = texelFetch(Z, ivec2(k + 2, 0), 0).r;
    vec4 before = texelFetch(Prev, ivec2(0, 0), 0);
    float count = texelFetch(Prev, ivec2(1, 0), 0).g;
    bool good = pq > 0.0 && pq < 3.0e38 && gamma > 0.0 && gamma < 3.0e38;
    float watch = before.b >= 0.0 ? before.b : (good ? -1.0 : count);
    float alpha = good ? gamma / pq : 0.0;
    if (!(abs(alpha) < 3.0e38)) alpha = 0.0;
    int x = int(WPOS.x);
    if (x == 0)
        result = vec4(pq, gamma, watch, rr);
    else if (x == 1)
        result = vec4(alpha, count + 1.0, 0.0, 0.0);
    else
        result = vec4(updated(4 * (x - 2), alpha), updated(4 * (x - 2) + 1, alpha),
                      updated(4 * (x - 2) + 2, alpha), updated(4 * (x - 2) + 3, alpha));
}
