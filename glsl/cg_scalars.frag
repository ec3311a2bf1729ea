// The scalars of one conjugate-gradient iteration in one pass of one fragment (beyond the
// papers: 003 keeps each scalar in a 1 x 1 stream of its own, written by a pass of its own).
// The fragment adds the last partial sums of a dot product (`size` texels of P, in two
// dimensions; with JACOBI their first two components, r^T M r and r^T r) and updates the
// state of the iteration, an RGBA texel (delta, y, flag, converged):
//   delta      r^T s (s = M r), as Shewchuk's listing;
//   y          after STAGE 1 the sum d^T q; after STAGES 0 and 2 ||r||^2 (read back by the host);
//   flag       the breakdown watch of cg_breakdown_flag.frag: the first iteration with
//              d^T A d <= 0 (+ 0.5 for an overflow), -1 while none; silent once converged;
//   converged  the convergence watch of cg_converged.frag: the first iteration with
//              ||r||^2 <= threshold, -1 while none.
// STAGE 0: CG (re)starts: (delta, ||r||^2, -1, -1). STAGE 1, after q = A d: y = d^T q, the
// breakdown watch updated (alpha = delta / d^T q, 0 once converged, is computed where it is
// used, cg_update.frag). STAGE 2, after the new r: delta and ||r||^2 of the new r, the
// convergence watch updated (beta = delta_new / delta_old, 0 once converged, likewise).
uniform sampler2D P;
uniform ivec2 size;
uniform float iteration;
uniform float threshold;
#if STAGE >= 1
uniform sampler2D state;
#endif
out vec4 result;

void main() {
    vec4 s = vec4(0.0);
    for (int y = 0; y < size.y; y++)
        for (int x = 0; x < size.x; x++)
            s += texelFetch(P, ivec2(x, y), 0);
#if JACOBI
    float delta = s.x, rr = s.y;
#else
    float delta = s.x, rr = s.x;
#endif
#if STAGE == 0
    result = vec4(delta, rr, -1.0, -1.0);
#else
    vec4 old = texelFetch(state, ivec2(0), 0);
#if STAGE == 1
    float v = s.x;
    bool frozen = old.w >= 0.0;
    bool overflow = isinf(v) || isnan(v);
    bool not_positive = !overflow && !(v > 0.0);
    float flag = (old.z >= 0.0 || frozen) ? old.z : (overflow ? iteration + 0.5 : (not_positive ? iteration : -1.0));
    result = vec4(old.x, v, flag, old.w);
#else
    float conv = old.w >= 0.0 ? old.w : (rr <= threshold ? iteration : -1.0);
    result = vec4(delta, rr, old.z, conv);
#endif
#endif
}
