// Beyond the papers: the substitutions of substitution_column_ff.frag a block of `bsize` steps a
// pass, in float-float arithmetic (float_float.glsl): 2 ceil(m / bsize) passes for L Lᵀ z = r
// instead of 2m. Every fragment reads the state before the pass; the block is the entries
// k0 .. k1 - 1 (k1 = min(k0 + bsize, m)), solved in each fragment by substitution with the
// block's diagonal part of T (forward: entries k0 up, backward: k1 - 1 down),
//     x_p = (b_p - sum_{q in the block, solved before p} T(p, q) x_q) / T(p, p),
// after which the fragment of a block entry keeps its x_p, an unfinished entry i (i >= k1
// forward, i < k0 backward) becomes b_i - sum_{q in the block} T(i, q) x_q, and a finished one
// is copied. T(i, j) at texel (j, i); by_rows: the operator is Tᵀ (T(j, i), through the
// swizzle). hi in .r, lo in .g.
uniform sampler2D X;        // b, with the finished x_j in place
uniform sampler2D T;
uniform int k0;
uniform int bsize;
uniform int m;
uniform bool forward;
uniform bool by_rows;       // solve with Tᵀ
out vec4 result;

const int MAX_BLOCK = 32;

vec2 op(int r, int c) {     // entry (r, c) of the operator: T, or Tᵀ
    return (by_rows ? texelFetch(T, ivec2(r, c), 0) : texelFetch(T, ivec2(c, r), 0)).rg;
}

void main() {
    int i = int(WPOS.x);
    int k1 = min(k0 + bsize, m);
    vec4 xi = texelFetch(X, ivec2(i, 0), 0);
    if (forward ? i < k0 : i >= k1) {       // finished: copied
        result = xi;
        return;
    }
    vec2 xb[MAX_BLOCK];                      // the block's solution, entry p at p - k0
    int n = k1 - k0;
    for (int s = 0; s < n; s++) {
        int p = forward ? k0 + s : k1 - 1 - s;
        vec2 v = texelFetch(X, ivec2(p, 0), 0).rg;
        for (int u = 0; u < s; u++) {
            int q = forward ? k0 + u : k1 - 1 - u;
            v = ff_sub(v, ff_mul(op(p, q), xb[q - k0]));
        }
        xb[p - k0] = ff_div(v, op(p, p));
    }
    if (i >= k0 && i < k1) {
        result = vec4(xb[i - k0], 0.0, 0.0);
        return;
    }
    vec2 v = xi.rg;                           // unfinished: the block's terms taken off
    for (int q = k0; q < k1; q++)
        v = ff_sub(v, ff_mul(op(i, q), xb[q - k0]));
    result = vec4(v, 0.0, 0.0);
}
