// Beyond the papers: s = STEPS consecutive steps k .. k + s - 1 of cholesky_inverse_step_ff in one
// pass, cholesky_inverse_steps.frag in float-float arithmetic (float_float.glsl). Each fragment
// replays the s steps on the entries it needs, from the state S before step k, with the one-step
// pass's operations in their order:
//   step k + t   d_t = S_t(k+t, k+t) (guarded),
//                S_{t+1}(i, j) = S_t(i, j) - (S_t(i, k+t) S_t(j, k+t)) (1 / d_t)     (j > k + t),
//                L(k+t, k+t) = sqrt(d_t),  L(i, k+t) = S_t(i, k+t) (1 / sqrt(d_t)),
//                X_{t+1}(k+t, c) = X_t(k+t, c) (1 / sqrt(d_t)),
//                X_{t+1}(i, c) = X_t(i, c) - (S_t(i, k+t) (1 / sqrt(d_t))) X_{t+1}(k+t, c)  (c <= k+t < i).
// The pivots' roots, the reciprocals and the block's columns S_t(k+a, k+t) come from the vertex program
// (cholesky_block_pivots_ff.vert, flat float-float pairs); a fragment fetches its row's
// U = S(i, k .. k+s-1), its column's V = S(j, k .. k+s-1), its own entry, and in the inverse half
// X(k .. k+s-1, c). Columns k - s .. k - 1 of the factor and rows k - s .. k - 1 of X, finished
// by the pass before, are copied. The last pass has min(s, m - k) steps: ceil(m / s) passes
// instead of m. hi in .r, lo in .g.
uniform sampler2D L;
uniform int k;
uniform int m;
#define PACKED_VALUES (3 * STEPS + STEPS * (STEPS - 1) / 2)
flat in vec4 PACKED[(2 * PACKED_VALUES + 3) / 4];
#define GET_FLOAT(i) PACKED[(i) / 4][(i) % 4]
#define GET(i) vec2(GET_FLOAT(2 * (i)), GET_FLOAT(2 * (i) + 1))
#define R(t) GET(t)                                  // sqrt(d_t), d_t guarded
#define ID(t) GET(STEPS + (t))                       // 1 / d_t
#define IR(t) GET(2 * STEPS + (t))                   // 1 / sqrt(d_t)
#define C(a, t) GET(3 * STEPS + (a) * ((a) - 1) / 2 + (t))   // S_t(k + a, k + t), a > t
out vec4 result;

vec2 S(int i, int j) {                     // the state before step k: row i, column j
    return texelFetch(L, ivec2(j, i), 0).rg;
}

void main() {
    ivec2 t = ivec2(floor(WPOS));            // (column, row) of the joined texture
    int i = t.y;
    int s = min(STEPS, m - k);
    bool inverse = t.x >= m;
    if ((!inverse && t.x < k) || (inverse && i < k)) {   // finished by the pass before: copied
        result = texelFetch(L, t, 0);
        return;
    }
    int j = inverse ? t.x - m : t.x;         // the factor's column, or X's column
    bool in_block = i < k + s;               // row i is one of the block's
    bool update = !inverse && j >= k + s;    // the Cholesky half right of the block
    vec2 U[STEPS];                           // S_t(i, k + a), rows below the block
    vec2 V[STEPS];                           // S_t(j, k + a), the update's fragments
    vec2 XB[STEPS];                          // X_t(k + a, j), the inverse half
    for (int a = 0; a < STEPS; ++a) {
        bool here = a < s;
        U[a] = here && !in_block ? S(i, k + a) : vec2(0.0);
        V[a] = here && update ? S(j, k + a) : vec2(0.0);
        XB[a] = here && inverse ? texelFetch(L, ivec2(t.x, k + a), 0).rg : vec2(0.0);
    }
    vec2 w = update || (inverse && !in_block) ? texelFetch(L, t, 0).rg : vec2(0.0);   // S(i, j) or X(i, j)
    for (int q = 0; q < STEPS; ++q) {
        if (q >= s)
            break;
        vec2 inv_d = ID(q);
        vec2 inv_l = IR(q);
        if (!inverse && j == k + q) {        // column k + q of the factor is finished here
            vec2 below = U[q];
            for (int a = q + 1; a < STEPS; ++a)  // a row of the block: S_q(k + a, k + q)
                if (in_block && a == i - k)
                    below = C(a, q);
            result = vec4(i == j ? R(q) : ff_mul(below, inv_l), 0.0, 0.0);
            return;
        }
        if (inverse && j <= k + q) {         // step k + q of X = L^-1 (its columns 0 .. k + q)
            XB[q] = ff_mul(XB[q], inv_l);
            for (int a = q + 1; a < STEPS; ++a)
                XB[a] = ff_sub(XB[a], ff_mul(ff_mul(C(a, q), inv_l), XB[q]));
            if (!in_block)
                w = ff_sub(w, ff_mul(ff_mul(U[q], inv_l), XB[q]));
        }
        if (update)
            w = ff_sub(w, ff_mul(ff_mul(U[q], V[q]), inv_d));
        for (int b = q + 1; b < STEPS; ++b) {
            U[b] = ff_sub(U[b], ff_mul(ff_mul(U[q], C(b, q)), inv_d));
            V[b] = ff_sub(V[b], ff_mul(ff_mul(V[q], C(b, q)), inv_d));
        }
    }
    if (inverse && in_block)                 // X's row i, one of the block's
        for (int a = 0; a < STEPS; ++a)
            if (a == i - k)
                w = XB[a];
    result = vec4(w, 0.0, 0.0);
}
